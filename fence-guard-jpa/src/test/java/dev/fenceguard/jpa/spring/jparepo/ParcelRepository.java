package dev.fenceguard.jpa.spring.jparepo;

import dev.fenceguard.jpa.spring.FencedJpaRepository;
import org.springframework.data.jpa.repository.JpaRepository;

/** An ordinary repository that adds the fenced writes. */
public interface ParcelRepository extends JpaRepository<Parcel, Long>, FencedJpaRepository<Parcel, Long> {}
