package dev.fenceguard.jpa.spring.jdbcrepo;

import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Column;
import org.springframework.data.relational.core.mapping.Table;

/** The property template's resource through Spring Data JDBC: {@code tags (id TEXT, label TEXT, fence_token BIGINT, deleted BOOLEAN)}. */
@Table("tags")
public record Tag(@Id String id, String label, @Fence @Column("fence_token") Long fenceToken, @Tombstone Boolean deleted) {

    public static final String DDL = "CREATE TABLE tags (id TEXT PRIMARY KEY, label TEXT, fence_token BIGINT, deleted BOOLEAN)";
}
