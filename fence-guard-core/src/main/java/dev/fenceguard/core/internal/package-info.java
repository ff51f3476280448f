/** Implementation details of fence-guard; not an API, may change in any release. */
package dev.fenceguard.core.internal;
