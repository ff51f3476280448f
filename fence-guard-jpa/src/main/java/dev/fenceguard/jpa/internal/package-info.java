/** Internals of fence-guard-jpa; not API. */
package dev.fenceguard.jpa.internal;
