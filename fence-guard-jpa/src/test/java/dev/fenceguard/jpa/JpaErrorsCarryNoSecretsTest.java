package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.testkit.Printed;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A trigger that refuses a fenced write with the SQLSTATE of insufficient_privilege and the new row in
 * its message: the exception says SQLSTATE and operation, never the message, through Hibernate too.
 */
class JpaErrorsCarryNoSecretsTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpasecrets", List.of(Shipment.DDL,
            "CREATE FUNCTION no_status_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    + "RAISE EXCEPTION 'status % may not replace %', NEW.status, OLD.status USING ERRCODE = '42501'; END $$",
            "CREATE TRIGGER no_status_change BEFORE UPDATE ON shipments FOR EACH ROW EXECUTE FUNCTION no_status_change()"),
            Shipment.class);
    private static final FencedEntityWriter<Shipment> SHIPMENTS = FencedEntity.builder(Shipment.class)
            .withMetrics(LockMetrics.none()).build().on(DB.emf);

    @AfterAll
    static void close() {
        DB.close();
    }

    @Test
    void aTriggersMessageStaysOutOfTheException() {
        String id = "s-" + UUID.randomUUID();
        DB.exec("INSERT INTO shipments (id, status) VALUES ('" + id + "', 'new')");
        String marker = "marker-" + UUID.randomUUID();

        Throwable thrown = catchThrowable(() -> SHIPMENTS.update(id, FenceToken.of(5), Map.of("status", marker)));

        assertThat(thrown).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.AUTH);
            assertThat(e.getMessage()).contains("SQLSTATE 42501").contains("withheld");
        });
        assertThat(Printed.everything(thrown)).doesNotContain(marker).doesNotContain("may not replace");
        assertThat(DB.one("SELECT status, fence_token FROM shipments WHERE id = '" + id + "'")).as("nothing written").isEqualTo("new|null");
    }
}
