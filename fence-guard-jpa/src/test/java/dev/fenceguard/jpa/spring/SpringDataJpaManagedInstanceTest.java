package dev.fenceguard.jpa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.spring.jparepo.Note;
import dev.fenceguard.jpa.spring.jparepo.NoteRepository;
import dev.fenceguard.jpa.spring.jparepo.Parcel;
import dev.fenceguard.jpa.spring.jparepo.ParcelRepository;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The repository fragment used as a Spring application uses it: in a {@code @Transactional} method, find
 * the entity, change it, {@code fencedSave} it (or another fenced write of its row). A zombie's write is
 * {@code Stale} with the successor's fence, with {@code @Version} ({@code Parcel}) and without
 * ({@code Note}), and no plain flush of its instance reaches the table, before the fenced statement or at
 * commit.
 */
class SpringDataJpaManagedInstanceTest {

    private static final SpringContexts SPRING = SpringContexts.jpa("sdjpazombie", Parcel.DDL, Note.DDL);
    private static final ParcelRepository PARCELS = SPRING.bean(ParcelRepository.class);
    private static final NoteRepository NOTES = SPRING.bean(NoteRepository.class);
    private static final AtomicLong IDS = new AtomicLong();

    enum Op { SAVE, UPDATE, UPSERT, CLAIM, DELETE }

    @AfterAll
    static void close() {
        SPRING.close();
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    private static List<String> plainWrites(String table, List<String> ran) {
        return ran.stream().filter(s -> (s.startsWith("update " + table + " set") || s.startsWith("insert into " + table))
                && !s.contains("coalesce(")).toList();
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void aZombiesWriteThroughTheFragmentIsStaleWithVersion(Op op) {
        long id = IDS.incrementAndGet();
        SPRING.schema.execute("INSERT INTO " + SPRING.schema.name() + ".parcels (id, status, fence_token, version) VALUES (" + id
                + ", 'new', 10, 0)");
        Integer before = SPRING.tx.execute(status -> {
            Parcel mine = PARCELS.findById(id).orElseThrow();
            mine.status = "zombie";
            SPRING.newTx.executeWithoutResult(s -> assertThat(PARCELS.fencedUpdate(id, f(20), Map.of("status", "successor")).isApplied())
                    .isTrue());
            int start = SpringContexts.JPA_SQL.size();
            WriteOutcome out = switch (op) {
                case SAVE -> PARCELS.fencedSave(mine, f(10));
                case UPDATE -> PARCELS.fencedUpdate(id, f(10), Map.of("status", "written"));
                case UPSERT -> PARCELS.fencedUpsert(id, f(10), Map.of("status", "written"));
                case CLAIM -> PARCELS.fencedClaim(id, f(10));
                case DELETE -> PARCELS.fencedDelete(id, f(10));
            };
            assertThat(out).isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(20));
            assertThat(mine.status).as("the zombie's instance shows the row as it is").isEqualTo("successor");
            return start;
        });
        List<String> ran = List.copyOf(SpringContexts.JPA_SQL.subList(before, SpringContexts.JPA_SQL.size()));
        assertThat(plainWrites("parcels", ran)).as("plain flushes among %s", ran).isEmpty();
        assertThat(ran).as("statements of the zombie's write and its commit").hasSize(3);
        assertThat(SPRING.one("SELECT status, fence_token, deleted, version FROM parcels WHERE id = " + id)).isEqualTo("successor|20|null|1");
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void aZombiesWriteThroughTheFragmentIsStaleWithoutVersion(Op op) {
        String id = "n-" + IDS.incrementAndGet();
        SPRING.schema.execute("INSERT INTO " + SPRING.schema.name() + ".notes (id, body, fence_token) VALUES ('" + id + "', 'new', 10)");
        int before = SpringContexts.JPA_SQL.size();
        SPRING.tx.executeWithoutResult(status -> {
            Note mine = NOTES.findById(id).orElseThrow();
            mine.body = "zombie";
            SPRING.newTx.executeWithoutResult(s -> assertThat(NOTES.fencedUpdate(id, f(20), Map.of("body", "successor")).isApplied()).isTrue());
            WriteOutcome out = switch (op) {
                case SAVE -> NOTES.fencedSave(mine, f(10));
                case UPDATE -> NOTES.fencedUpdate(id, f(10), Map.of("body", "written"));
                case UPSERT -> NOTES.fencedUpsert(id, f(10), Map.of("body", "written"));
                case CLAIM -> NOTES.fencedClaim(id, f(10));
                case DELETE -> NOTES.fencedDelete(id, f(10));
            };
            assertThat(out).isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(20));
            assertThat(mine.body).as("the zombie's instance shows the row as it is").isEqualTo("successor");
        });
        List<String> ran = List.copyOf(SpringContexts.JPA_SQL.subList(before, SpringContexts.JPA_SQL.size()));
        assertThat(plainWrites("notes", ran)).as("plain flushes among %s", ran).isEmpty();
        assertThat(SPRING.one("SELECT body, fence_token, deleted FROM notes WHERE id = '" + id + "'")).isEqualTo("successor|20|null");
    }
}
