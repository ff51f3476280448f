package dev.fenceguard.examples.docs.jpadoc;

import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

// The entity in the Javadoc of Fence: written by JpaJavadocSamplesTest through FencedEntity's sample.

// dev/fenceguard/jpa/Fence.java: entity (begin)
@Entity
@Table(name = "orders")        // "order" is an SQL keyword
class Order {
    @Id Long id;
    String status;
    @Fence @Column(name = "fence_token", updatable = false) Long fenceToken;
    @Tombstone @Column(updatable = false) Boolean deleted;
}
// dev/fenceguard/jpa/Fence.java: entity (end)
