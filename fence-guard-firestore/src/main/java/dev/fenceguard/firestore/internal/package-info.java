/** Implementation details of fence-guard-firestore; not an API. */
package dev.fenceguard.firestore.internal;
