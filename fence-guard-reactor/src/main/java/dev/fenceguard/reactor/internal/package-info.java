/** Implementation details of fence-guard's Reactor face; not an API, may change in any release. */
package dev.fenceguard.reactor.internal;
