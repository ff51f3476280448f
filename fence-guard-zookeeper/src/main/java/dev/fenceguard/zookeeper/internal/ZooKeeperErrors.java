package dev.fenceguard.zookeeper.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.internal.Stages;
import org.apache.zookeeper.KeeperException;

/**
 * The one place where ZooKeeper's and Curator's failures become {@link FenceGuardException}s. A
 * ZooKeeper result code is mapped by its name ({@code CONNECTIONLOSS}, ...), which is all the message
 * keeps: a {@link KeeperException}'s own text names the path, which holds the key but is not fence-guard's
 * to vouch for, so it is withheld like every other driver's text.
 */
public final class ZooKeeperErrors {

    private ZooKeeperErrors() {}

    /** The fence-guard code of a ZooKeeper result code. */
    public static ErrorCode code(KeeperException.Code code) {
        return switch (code) {
            case CONNECTIONLOSS, SESSIONEXPIRED, SESSIONMOVED, NOTREADONLY, RECONFIGINPROGRESS, THROTTLEDOP,
                    QUOTAEXCEEDED, SYSTEMERROR -> ErrorCode.UNAVAILABLE;
            case OPERATIONTIMEOUT, REQUESTTIMEOUT -> ErrorCode.TIMEOUT;
            case NOAUTH, AUTHFAILED, SESSIONCLOSEDREQUIRESASLAUTH -> ErrorCode.AUTH;
            default -> ErrorCode.INTERNAL;
        };
    }

    /** A failure for result code {@code rc} of {@code operation} on {@code key}'s lock. */
    public static FenceGuardException of(int rc, String key, String operation) {
        return of(rc, key, operation, null);
    }

    private static FenceGuardException of(int rc, String key, String operation, Throwable cause) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        String name = code == null ? "result code " + rc : code.name();
        return new FenceGuardException(code == null ? ErrorCode.INTERNAL : code(code), key, operation + " failed: ZooKeeper answered "
                + name, cause);
    }

    /**
     * A failure for what a call threw or failed with: fence-guard's own exceptions pass unchanged, a
     * {@link KeeperException} keeps its code only, anything else its class name only.
     */
    public static FenceGuardException map(Throwable error, String key, String operation) {
        Throwable e = Stages.unwrap(error);
        if (e instanceof FenceGuardException f) {
            return f;
        }
        if (e instanceof KeeperException k) {
            return of(k.code().intValue(), key, operation, Redacted.of(k, k.code().name()));
        }
        if (e instanceof IllegalStateException) {
            // Curator's "instance must be started before calling this method" and the like: no server to talk to
            return new FenceGuardException(ErrorCode.UNAVAILABLE, key, operation + " failed: the Curator client is not usable ("
                    + e.getClass().getName() + "; is it started?)", Redacted.of(e, null));
        }
        return new FenceGuardException(ErrorCode.INTERNAL, key, operation + " failed: " + e.getClass().getName(), Redacted.of(e, null));
    }
}
