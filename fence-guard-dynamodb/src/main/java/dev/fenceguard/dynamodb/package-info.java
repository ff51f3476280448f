/** fence-guard for Amazon DynamoDB: lock backend and fenced item writes. */
package dev.fenceguard.dynamodb;
