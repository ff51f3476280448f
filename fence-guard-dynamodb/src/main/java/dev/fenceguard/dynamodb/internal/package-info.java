/** Implementation details of fence-guard-dynamodb; not an API. */
package dev.fenceguard.dynamodb.internal;
