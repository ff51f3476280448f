package dev.fenceguard.jpa.spring.jparepo;

import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The property template's resource through Spring Data JPA: {@code notes (id TEXT, body TEXT, fence_token BIGINT, deleted BOOLEAN)}. */
@Entity
@Table(name = "notes")
public class Note {
    @Id
    public String id;
    public String body;
    @Fence
    @Column(name = "fence_token", updatable = false)
    public Long fenceToken;
    @Tombstone
    @Column(updatable = false)
    public Boolean deleted;

    protected Note() {}

    public Note(String id, String body) {
        this.id = id;
        this.body = body;
    }

    public static final String DDL = "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT, fence_token BIGINT, deleted BOOLEAN)";
}
