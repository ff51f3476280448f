package dev.fenceguard.jpa.spring.jparepo;

import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** {@code parcels (id BIGINT, status TEXT, fence_token BIGINT, deleted BOOLEAN, version BIGINT)}. */
@Entity
@Table(name = "parcels")
public class Parcel {
    @Id
    public Long id;
    public String status;
    @Fence
    @Column(name = "fence_token", updatable = false)
    public Long fenceToken;
    @Tombstone
    @Column(updatable = false)
    public Boolean deleted;
    @Version
    public Long version;

    protected Parcel() {}

    public Parcel(long id, String status) {
        this.id = id;
        this.status = status;
    }

    public static final String DDL = "CREATE TABLE parcels (id BIGINT PRIMARY KEY, status TEXT, fence_token BIGINT, deleted BOOLEAN, version BIGINT)";
}
