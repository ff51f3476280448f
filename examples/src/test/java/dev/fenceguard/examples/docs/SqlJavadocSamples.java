package dev.fenceguard.examples.docs;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceColumn;
import dev.fenceguard.migrations.FenceColumnMigration;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.impl.TableImpl;

/**
 * The samples in the Javadoc of fence-guard-jdbc, fence-guard-jooq and fence-guard-migrations, on the
 * embedded PostgreSQL's {@code public} schema as they name it (see {@link EmbeddedOrders}).
 */
final class SqlJavadocSamples {

    /** What jOOQ's code generator makes of {@code public.orders}, cut down to the columns the samples use. */
    static final class OrdersTable extends TableImpl<Record> {
        private static final long serialVersionUID = 1L;

        final TableField<Record, Long> ID = createField(DSL.name("id"), SQLDataType.BIGINT.nullable(false), this, "");
        final TableField<Record, String> STATUS = createField(DSL.name("status"), SQLDataType.CLOB.nullable(false), this, "");
        final TableField<Record, OffsetDateTime> PAID_AT = createField(DSL.name("paid_at"), SQLDataType.TIMESTAMPWITHTIMEZONE, this, "");
        final TableField<Record, Long> FENCE_TOKEN = createField(DSL.name("fence_token"), SQLDataType.BIGINT.nullable(false), this, "");

        OrdersTable() {
            super(DSL.name("orders"), DSL.schema(DSL.name("public")));
        }
    }

    static final OrdersTable ORDERS = new OrdersTable();

    private final DataSource dataSource;
    private final FencedTable orders;

    SqlJavadocSamples(DataSource dataSource, FencedTable orders) {
        this.dataSource = dataSource;
        this.orders = orders;
    }

    /** The application's own work under the lock of the FenceGuardJdbc sample. */
    WriteOutcome ship(long id, Lease lease) {
        return orders.on(dataSource).update(id, lease.fence(), Assignments.of("status", "shipped")).orThrow();
    }

    void fenceGuardJdbc() throws InterruptedException {
        // dev/fenceguard/jdbc/FenceGuardJdbc.java: migrate and close (begin)
        FenceGuardMigrations.migrate(dataSource);                           // creates public.fence_guard_locks
        try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build()) {
            LockClient locks = LockClient.of(jdbc.lockBackend());
            locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> ship(42L, lease));
        }
        // dev/fenceguard/jdbc/FenceGuardJdbc.java: migrate and close (end)
    }

    static List<Assignments> assignments(OffsetDateTime now) {
        // dev/fenceguard/jooq/Assignments.java: typed and named (begin)
        Assignments typed = Assignments.of(ORDERS.STATUS, "paid").and(ORDERS.PAID_AT, now);   // jOOQ generated fields
        Assignments named = Assignments.of("status", "paid").and("paid_at", now);             // plain column names
        // dev/fenceguard/jooq/Assignments.java: typed and named (end)
        return List.of(typed, named);
    }

    static List<FencedTable> fencedTable(DSLContext dsl, Lease lease) {
        // dev/fenceguard/jooq/FencedTable.java: generated or plain (begin)
        // jOOQ generated classes
        FencedTable orders = FencedTable.builder(ORDERS, ORDERS.ID, ORDERS.FENCE_TOKEN).build();
        // or plain names
        FencedTable byName = FencedTable.builder("public", "orders", "id", "fence_token")
                .withKeyType(Long.class).withTombstoneColumn("fence_deleted").build();

        orders.on(dsl).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow();
        // dev/fenceguard/jooq/FencedTable.java: generated or plain (end)
        return List.of(orders, byName);
    }

    void warmUp() {
        // dev/fenceguard/jooq/FencedWriter.java: warm up (begin)
        orders.on(dataSource).warmUp(Assignments.of("status", ""), Assignments.of("status", "").and("paid_at", null));
        // dev/fenceguard/jooq/FencedWriter.java: warm up (end)
    }

    static void fenceColumnMigration(DataSource dataSource) {
        // dev/fenceguard/migrations/FenceColumnMigration.java: java migration (begin)
        Flyway.configure()
              .dataSource(dataSource)
              .javaMigrations(new FenceColumnMigration("7", FenceColumn.on("public", "invoices")
                                                                .withTombstoneColumn("fence_deleted")))
              .load().migrate();
        // dev/fenceguard/migrations/FenceColumnMigration.java: java migration (end)
    }
}
