/** Implementation details of fence-guard-jdbc; not an API. */
package dev.fenceguard.jdbc.internal;
