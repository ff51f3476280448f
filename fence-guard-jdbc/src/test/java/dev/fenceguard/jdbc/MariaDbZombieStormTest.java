package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.testkit.ZombieStorm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the MariaDB lock backend with the SQL fenced writes (claim, then update), through
 * MariaDB Connector/J with changed-row counts ({@code useAffectedRows=true}), the mode where an update
 * that changes nothing counts 0. Size: 300 attempts, or {@code -Dfenceguard.storm.attempts=N}.
 */
class MariaDbZombieStormTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("storm", "mariadb", "useAffectedRows=true");

    @AfterAll
    static void dropDatabase() {
        MARIA.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        String q = MARIA.q("counters");
        MARIA.exec("CREATE TABLE " + q + " (id VARCHAR(20) PRIMARY KEY, n BIGINT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        MARIA.exec("INSERT INTO " + q + " (id, n) VALUES ('c', 0)");
        FencedWriter counters = FencedTable.builder(MARIA.db.name(), "counters", "id", "fence_token").withMetrics(LockMetrics.none())
                .build().on(MARIA.ds);
        ZombieStorm.FencedCounter counter = new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return counters.claim("c", fence);
            }

            @Override
            public long read() {
                try (Connection c = MARIA.ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT n FROM " + q + " WHERE id = 'c'");
                        ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                } catch (SQLException e) {
                    throw MySqlErrors.map(e, q, "read");
                }
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return counters.update("c", fence, Assignments.of("n", value));
            }
        };
        ZombieStorm.Result r = PgStorms.storm(MARIA.backend("locks").build(), counter, ZombieStorm.attemptsProperty(300)).build().run();
        System.out.println("STORM mariadb: " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.rejectedStale()).isPositive();
        r.requireSafe();
    }
}
