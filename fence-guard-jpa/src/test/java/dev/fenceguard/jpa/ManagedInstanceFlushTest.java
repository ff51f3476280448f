package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The natural use inside a transaction: load the entity, change it, write it fenced. Nothing of the
 * managed instance may reach the row by a plain flush, ahead of the fenced statement (Hibernate's AUTO
 * flush before a bulk statement), instead of it, or at commit afterwards: a zombie's write is
 * {@code Stale} with the successor's fence, with or without {@code @Version}, and a holder's pending
 * changes are written by its fenced statement. Every statement Hibernate runs is recorded and checked.
 */
class ManagedInstanceFlushTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpaflush", List.of(Shipment.DDL, Voucher.DDL, Crane.DDL),
            Shipment.class, Voucher.class, Crane.class);

    /** One of the two test entities: {@code Shipment} (no version) and {@code Voucher} ({@code @Version}). */
    record Kind<T>(String name, Class<T> type, String table, FencedEntity<T> fenced, Function<T, String> status,
            BiConsumer<T, String> setStatus, BiConsumer<T, Integer> setItems, boolean versioned) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final Kind<Shipment> SHIPMENT = new Kind<>("Shipment (no @Version)", Shipment.class, "shipments",
            FencedEntity.builder(Shipment.class).withMetrics(LockMetrics.none()).build(), s -> s.status, (s, v) -> s.status = v,
            (s, v) -> s.items = v, false);
    private static final Kind<Voucher> VOUCHER = new Kind<>("Voucher (@Version)", Voucher.class, "vouchers",
            FencedEntity.builder(Voucher.class).withMetrics(LockMetrics.none()).build(), v -> v.status, (v, s) -> v.status = s,
            (v, s) -> v.items = s, true);

    /** A fenced operation, called as a user would on the instance or id they hold. */
    enum Op {
        SAVE, UPDATE, UPSERT, CLAIM, DELETE;

        <T> WriteOutcome write(FencedEntityWriter<T> w, T instance, String id, FenceToken fence) {
            return switch (this) {
                case SAVE -> w.save(instance, fence);
                case UPDATE -> w.update(id, fence, Map.of("status", "written"));
                case UPSERT -> w.upsert(id, fence, Map.of("status", "written"));
                case CLAIM -> w.claim(id, fence);
                case DELETE -> w.delete(id, fence);
            };
        }
    }

    static Stream<Arguments> cases() {
        return Stream.of(SHIPMENT, VOUCHER).flatMap(k -> Stream.of(Op.values()).map(op -> Arguments.of(k, op)));
    }

    @AfterAll
    static void close() {
        DB.close();
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    /** A row with status {@code new}, no items, fence 10 (and version 0). */
    private static String newRow(Kind<?> k) {
        String id = "m-" + UUID.randomUUID();
        DB.exec("INSERT INTO " + k.table() + " (id, status, fence_token) VALUES ('" + id + "', 'new', 10)");
        return id;
    }

    private static String row(Kind<?> k, String id) {
        return DB.one("SELECT status, items, fence_token, deleted" + (k.versioned() ? ", version" : "") + " FROM " + k.table()
                + " WHERE id = '" + id + "'");
    }

    /** Statements that write the table without the fence rule: Hibernate's own flush of an instance. */
    private static List<String> plainWrites(Kind<?> k, List<String> ran) {
        return ran.stream().filter(s -> (s.startsWith("update " + k.table() + " set") || s.startsWith("insert into " + k.table()))
                && !s.contains("coalesce(")).toList();
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("cases")
    <T> void aZombiesWriteOfItsOwnChangedInstanceIsStaleAndNoneOfItReachesTheRow(Kind<T> k, Op op) {
        String id = newRow(k);
        List<String> ran;
        try (EntityManager zombie = DB.emf.createEntityManager()) {
            zombie.getTransaction().begin();
            T mine = zombie.find(k.type(), id); // holds fence 10
            k.setStatus().accept(mine, "zombie"); // pending: not flushed yet
            // Meanwhile its lease expired and the successor wrote under fence 20, in a transaction of its own.
            assertThat(k.fenced().on(DB.emf).update(id, f(20), Map.of("status", "successor")).isApplied()).isTrue();

            int before = DB.sql.size();
            WriteOutcome out = op.write(k.fenced().on(zombie), mine, id, f(10));
            assertThat(out).as("%s by the zombie", op).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                    s -> assertThat(s.currentFence()).isEqualTo(20));
            zombie.getTransaction().commit();
            ran = List.copyOf(DB.sql.subList(before, DB.sql.size()));
            assertThat(k.status().apply(mine)).as("the zombie's instance now shows the row as it is").isEqualTo("successor");
        }
        assertThat(plainWrites(k, ran)).as("plain flushes among %s", ran).isEmpty();
        assertThat(ran).as("the fenced statement, the read that finds it stale, the refresh of the zombie's instance; nothing at commit")
                .hasSize(3);
        assertThat(row(k, id)).isEqualTo("successor|0|20|null" + (k.versioned() ? "|1" : ""));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("cases")
    <T> void aHoldersPendingChangesAreWrittenByItsFencedStatementOrNotAtAll(Kind<T> k, Op op) {
        String id = newRow(k);
        List<String> ran;
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            T mine = em.find(k.type(), id);
            k.setStatus().accept(mine, "mine");
            k.setItems().accept(mine, 7); // pending changes of the row the fenced write is about

            int before = DB.sql.size();
            assertThat(op.write(k.fenced().on(em), mine, id, f(20)).isApplied()).as("%s by the holder", op).isTrue();
            em.getTransaction().commit();
            ran = List.copyOf(DB.sql.subList(before, DB.sql.size()));
            if (op == Op.DELETE) {
                assertThat(em.contains(mine)).as("a deleted row's instance is detached").isFalse();
            } else {
                assertThat(k.status().apply(mine)).as("the instance shows the written row").isEqualTo(op == Op.SAVE ? "mine"
                        : op == Op.CLAIM ? "mine" : "written");
            }
        }
        assertThat(plainWrites(k, ran)).as("plain flushes among %s", ran).isEmpty();
        String version = k.versioned() ? "|1" : "";
        String expected = switch (op) {
            case SAVE -> "mine|7|20|f";           // the instance's state: a repository's save, fenced
            case UPDATE -> "written|7|20|null";   // the values, with the pending change the statement carried
            case UPSERT -> "written|7|20|f";
            case CLAIM -> "mine|7|20|null";       // a claim carries the pending changes too: fenced, or not at all
            case DELETE -> "new|0|20|t";          // the pending changes of a deleted row are dropped with its instance
        };
        assertThat(row(k, id)).isEqualTo(expected + version);
        assertThat(ran).as("the fenced statement, then the refresh of the instance (none after a delete); nothing at commit")
                .hasSize(op == Op.DELETE ? 1 : 2);
    }

    @org.junit.jupiter.api.Test
    void pendingChangesAFencedStatementCannotCarryAreRefusedBeforeAnyStatement() {
        DB.exec("INSERT INTO cranes (id, label, aisle, bay, fence) VALUES (1, 'c', 'a', 1, 10)");
        FencedEntity<Crane> cranes = FencedEntity.builder(Crane.class).withMetrics(LockMetrics.none()).build();
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Crane mine = em.find(Crane.class, 1L);
            mine.spot.bay = 2; // a pending change to the embeddable: not a basic attribute
            int before = DB.sql.size();
            assertThatThrownBy(() -> cranes.on(em).update(1L, f(20), Map.of("label", "moved")))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("unflushed changes to 'spot', which a fenced statement cannot carry");
            assertThat(DB.sql.subList(before, DB.sql.size())).as("no statement was sent").isEmpty();
            em.getTransaction().rollback();
        }
        assertThat(DB.one("SELECT label, aisle, bay, fence FROM cranes WHERE id = 1")).isEqualTo("c|a|1|10");
    }

    @org.junit.jupiter.api.Test
    void aWriteThatFailsDetachesTheInstanceSoItsPendingChangesCannotBeFlushedUnfenced() {
        DB.exec("INSERT INTO cranes (id, label, aisle, bay, fence) VALUES (2, 'c', 'a', 1, 10)");
        DB.exec("ALTER TABLE cranes ADD CONSTRAINT label_not_bad CHECK (label IS NULL OR label <> 'bad')");
        FencedEntity<Crane> cranes = FencedEntity.builder(Crane.class).withMetrics(LockMetrics.none()).build();
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Crane mine = em.find(Crane.class, 2L);
            mine.label = "pending";
            assertThatThrownBy(() -> cranes.on(em).update(2L, f(20), Map.of("label", "bad")))
                    .isInstanceOf(dev.fenceguard.core.FenceGuardException.class).hasMessageContaining("23514");
            assertThat(em.contains(mine)).as("detached: no later flush can write its pending change").isFalse();
            em.getTransaction().rollback();
        }
        assertThat(DB.one("SELECT label, fence FROM cranes WHERE id = 2")).isEqualTo("c|10");
    }
}
