/**
 * Test servers (PostgreSQL, Redis, Firestore emulator, DynamoDB) shared by fence-guard's own tests and usable in
 * yours: each is found from an environment variable, else Testcontainers, else started locally, and a
 * test that cannot get one fails with a message naming all three ways.
 */
package dev.fenceguard.testkit.servers;
