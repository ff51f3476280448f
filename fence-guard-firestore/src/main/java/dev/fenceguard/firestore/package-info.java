/** fence-guard for firestore: lock backend and fenced writes. */
package dev.fenceguard.firestore;
