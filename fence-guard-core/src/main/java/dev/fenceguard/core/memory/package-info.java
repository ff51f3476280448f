/** An in-memory lock backend for unit tests and as the reference model of the contract. */
package dev.fenceguard.core.memory;
