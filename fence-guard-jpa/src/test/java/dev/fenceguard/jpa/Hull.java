package dev.fenceguard.jpa;

import jakarta.persistence.CascadeType;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.OneToMany;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.List;

/** A test entity with a fence and child entities it cascades every operation to: {@code hulls (id TEXT, status TEXT, fence_token BIGINT)}, {@code decks (id TEXT, name TEXT, hull_id TEXT)}. */
@Entity
@Table(name = "hulls")
public class Hull {
    @Id
    String id;
    String status;
    @Fence
    @Column(name = "fence_token", updatable = false)
    Long fenceToken;
    @OneToMany(mappedBy = "hull", cascade = CascadeType.ALL)
    List<Deck> decks = new ArrayList<>();

    protected Hull() {}

    /** A child of a hull: an entity of its own, written by Hibernate's ordinary flush. */
    @Entity
    @Table(name = "decks")
    public static class Deck {
        @Id
        String id;
        String name;
        @ManyToOne
        Hull hull;

        protected Deck() {}
    }

    static final String DDL = "CREATE TABLE hulls (id TEXT PRIMARY KEY, status TEXT, fence_token BIGINT)";
    static final String DECKS_DDL = "CREATE TABLE decks (id TEXT PRIMARY KEY, name TEXT, hull_id TEXT REFERENCES hulls (id))";
}
