package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.jdbc.internal.FlightListener;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * The flight store's LISTEN connection on a pool (HikariCP, as applications have). Closing the store ends the
 * reader's wait by aborting the connection the reader holds; the reader gives a connection back only aborted, so
 * that the pool drops it (its session still listens, or it broke in a read the pool did not see) rather than hand
 * it to its next borrower. Each connection the listener takes is recorded: its backend, whether it was aborted,
 * and when it was given back.
 */
class PostgresFlightListenerTest {

    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("flightlistener");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    /** One connection the listener took from the pool. */
    static final class Taken {
        final int backendPid;
        /** The threads that aborted it: the test's own (through close()) or the listener's reader. */
        final List<Thread> abortedBy = new CopyOnWriteArrayList<>();
        final CountDownLatch givenBack = new CountDownLatch(1);

        Taken(int backendPid) {
            this.backendPid = backendPid;
        }
    }

    /** {@code pool}, its connections proxied to record into {@code taken}. */
    private static DataSource recording(DataSource pool, List<Taken> taken) {
        return (DataSource) Proxy.newProxyInstance(PostgresFlightListenerTest.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (ds, dm, dargs) -> {
                    Object result = invoke(pool, dm, dargs);
                    if (!dm.getName().equals("getConnection")) {
                        return result;
                    }
                    Connection c = (Connection) result;
                    Taken t = new Taken(c.unwrap(PGConnection.class).getBackendPID());
                    taken.add(t);
                    return Proxy.newProxyInstance(PostgresFlightListenerTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                            (cp, m, args) -> {
                                if (m.getName().equals("abort")) {
                                    t.abortedBy.add(Thread.currentThread());
                                }
                                try {
                                    return invoke(c, m, args);
                                } finally {
                                    if (m.getName().equals("close")) {
                                        t.givenBack.countDown();
                                    }
                                }
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void closingTheStoreAbortsTheConnectionItsReaderHoldsAndTheReaderGivesItBack() throws Exception {
        List<Taken> taken = new CopyOnWriteArrayList<>();
        FlightListener listener = new FlightListener(recording(pg.ds, taken), "fg_sf_test_close_held");
        listener.watch("k", () -> {}).toCompletableFuture().get(30, TimeUnit.SECONDS); // LISTEN is in place
        assertThat(taken).as("one LISTEN connection").hasSize(1);

        listener.close();

        Taken reader = taken.getFirst();
        assertThat(reader.abortedBy).as("close() aborted the held connection itself, on the closing thread, which ends "
                + "the reader's wait").contains(Thread.currentThread());
        // An upper bound for a failure, not a timing: the reader's wait ends with the abort above.
        assertThat(reader.givenBack.await(30, TimeUnit.SECONDS)).as("the reader gave it back").isTrue();
    }

    @Test
    void aReaderWhoseSessionEndedGivesItsConnectionBackAbortedAndTheNextListenWorks() throws Exception {
        List<Taken> taken = new CopyOnWriteArrayList<>();
        FlightListener listener = new FlightListener(recording(pg.ds, taken), "fg_sf_test_close_given_back");
        listener.watch("k", () -> {}).toCompletableFuture().get(30, TimeUnit.SECONDS);
        Taken reader = taken.getFirst();
        // The server ends the reader's session: its wait fails and it gives the connection back (the pool evicts it).
        assertThat(pg.one("SELECT pg_terminate_backend(" + reader.backendPid + ")")).isEqualTo("t");
        assertThat(reader.givenBack.await(30, TimeUnit.SECONDS)).as("the reader gave its broken connection back").isTrue();

        listener.close();

        assertThat(taken).as("close() took no connection").hasSize(1);
        // The reader aborted it itself before giving it back (the pool never saw the failed read), so the pool dropped
        // it: the next LISTEN gets a working connection.
        assertThat(reader.abortedBy).as("the broken connection aborted by the reader before its return, and not by close()")
                .isNotEmpty().doesNotContain(Thread.currentThread());
        FlightListener next = new FlightListener(pg.ds, "fg_sf_test_close_given_back");
        try {
            next.watch("k", () -> {}).toCompletableFuture().get(30, TimeUnit.SECONDS);
        } finally {
            next.close();
        }
    }
}
