package dev.fenceguard.jpa.spring.jdbcrepo;

import dev.fenceguard.jpa.Fence;
import org.springframework.data.annotation.Id;
import org.springframework.data.annotation.Version;
import org.springframework.data.relational.core.mapping.Table;

/** An aggregate the JDBC fragment must refuse: it has a {@code @Version} that fenced writes could not raise. No table is needed. */
@Table("bins")
public record Bin(@Id Long id, @Fence Long fence, @Version Long version) {}
