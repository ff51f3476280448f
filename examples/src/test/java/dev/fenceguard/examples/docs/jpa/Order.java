package dev.fenceguard.examples.docs.jpa;

import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

// The entity of docs/jpa.md, "The entity": written by JpaSamplesTest through OrderService and the repositories.

// docs/jpa.md: entity (begin)
@Entity
@Table(name = "orders")                                   // "order" is an SQL keyword
class Order {
    @Id Long id;
    String status;
    @Fence @Column(name = "fence_token", updatable = false) Long fenceToken;   // BIGINT; or a String for CHAR(15)
    @Tombstone @Column(updatable = false) Boolean deleted;                     // needed for deletes
    @Version Long version;                                 // optional; see below
}
// docs/jpa.md: entity (end)
