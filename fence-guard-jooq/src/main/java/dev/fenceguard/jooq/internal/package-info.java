/** Implementation details of fence-guard-jooq; not an API. */
package dev.fenceguard.jooq.internal;
