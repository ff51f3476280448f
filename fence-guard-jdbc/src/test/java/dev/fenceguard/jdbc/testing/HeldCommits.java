package dev.fenceguard.jdbc.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;

/**
 * A data source whose connections stop at their first {@code commit()} until the test lets them go: the
 * transaction of a call (an acquisition, a purge batch) is then done and still open, holding its row locks,
 * at a point the test knows. With {@code autoCommitOff}, connections are handed out with auto-commit off, so
 * that a one-statement call (an acquisition) also ends with a {@code commit()} of its caller's.
 */
public final class HeldCommits {

    /** Counted down when a connection reaches {@code commit()}. */
    public final CountDownLatch atCommit = new CountDownLatch(1);
    /** Counted down by the test to let the commit go on. */
    public final CountDownLatch go = new CountDownLatch(1);
    private final DataSource dataSource;

    public HeldCommits(DataSource ds, boolean autoCommitOff) {
        this.dataSource = (DataSource) Proxy.newProxyInstance(HeldCommits.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    Object result = invoke(m, ds, args);
                    if (m.getName().equals("getConnection")) {
                        Connection c = (Connection) result;
                        if (autoCommitOff) {
                            c.setAutoCommit(false);
                        }
                        return held(c);
                    }
                    return result;
                });
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Lets the held commit go (also when the test fails before it would have). */
    public void release() {
        go.countDown();
    }

    private Connection held(Connection real) {
        return (Connection) Proxy.newProxyInstance(HeldCommits.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("commit")) {
                        atCommit.countDown();
                        go.await();
                    }
                    if (m.getName().equals("close") && !real.getAutoCommit()) {
                        real.rollback(); // nothing is left open in the pool's connection
                        real.setAutoCommit(true);
                    }
                    return invoke(m, real, args);
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
