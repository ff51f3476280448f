package dev.fenceguard.redis.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.internal.Stages;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.util.Map;
import java.util.Set;

/**
 * The one place where Lettuce's failures become fence-guard's {@link FenceGuardException}s, for the
 * lock backend and the fenced writes alike: the code ({@link ErrorCode}) and a message that keeps, of an
 * error the server replied, only its error code ({@code WRONGTYPE}, {@code NOSCRIPT}, ...) and only if
 * it is one of Redis's own: the text after it can echo arguments (a lock id) or be whatever a script
 * chose to say ({@code redis.error_reply} with stored data), and a script can make up the code too.
 * Lettuce's own texts (a timeout, a refused connection) are kept, without arguments.
 */
public final class RedisErrors {

    /** Error codes Redis itself replies with: a script-made code is withheld like the text after it. */
    private static final Set<String> REDIS_CODES = Set.of("ERR", "WRONGTYPE", "NOSCRIPT", "NOPERM", "NOAUTH", "WRONGPASS",
            "READONLY", "LOADING", "BUSY", "BUSYKEY", "BUSYGROUP", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "MOVED", "ASK",
            "CROSSSLOT", "NOREPLICAS", "OOM", "EXECABORT", "MISCONF", "NOTBUSY", "UNKILLABLE", "NOMASTERLINK", "NOPROTO",
            "UNBLOCKED");

    private RedisErrors() {}

    /**
     * A {@link FenceGuardException} for whatever a Lettuce call failed with (a future's failure, a
     * wrapper included, or an exception thrown at once): fence-guard's own exceptions pass unchanged.
     */
    public static FenceGuardException map(Throwable error, String subject, String operation, String... args) {
        Throwable e = Stages.unwrap(error);
        if (e instanceof FenceGuardException f) {
            return f;
        }
        if (e instanceof RedisException r) {
            return mapLettuce(r, subject, operation, args);
        }
        return new FenceGuardException(ErrorCode.INTERNAL, subject, operation + " failed: " + e.getClass().getName(),
                Redacted.of(e, null));
    }

    /**
     * A {@link FenceGuardException} for a Lettuce exception raised by a call with {@code args}: its
     * message and its cause (a {@link Redacted} copy with the same class name and stack trace) keep a
     * server error's Redis error code only (see the class comment), or Lettuce's own text without
     * {@code args}.
     */
    private static FenceGuardException mapLettuce(RedisException e, String subject, String operation, String... args) {
        ErrorCode code = code(e);
        String text = e instanceof RedisCommandExecutionException ? errorCode(e.getMessage()) : safeText(e.getMessage(), args);
        return new FenceGuardException(code, subject, operation + " failed: " + text, Redacted.of(e, text));
    }

    /**
     * Error codes fence-guard's own scripts reply with, and the fixed words they stand for (a user's script
     * that replied one would get these words, never its own text).
     */
    private static final Map<String, String> OWN_CODES = Map.of(
            "FGCOUNTER", "the lock's fence counter does not hold a number (its key holds something else)");

    /** A server error reply reduced to its error code, if it is one of Redis's own, or to fence-guard's words for its own. */
    static String errorCode(String reply) {
        String first = reply == null ? "" : reply.strip().split("\\s", 2)[0];
        if (OWN_CODES.containsKey(first)) {
            return first + ": " + OWN_CODES.get(first);
        }
        return REDIS_CODES.contains(first) ? first + " (error text withheld: it may quote arguments or stored data)"
                : "(error code and text withheld: a script's own error may quote stored data)";
    }

    /** Lettuce's own error text without echoed arguments: cut where Redis starts quoting them, and any argument removed. */
    public static String safeText(String message, String... args) {
        if (message == null) {
            return "(no message)";
        }
        String text = message;
        int echo = text.indexOf(", with args beginning with");
        if (echo >= 0) {
            text = text.substring(0, echo) + " (arguments withheld)";
        }
        for (String arg : args) {
            // Short arguments (TTLs, counts, a fence) are not secret, and replacing them would garble line numbers.
            if (arg != null && arg.length() >= 6 && text.contains(arg)) {
                text = text.replace(arg, "<argument withheld>");
            }
        }
        return text.strip();
    }

    static ErrorCode code(RedisException e) {
        // Authentication errors can arrive wrapped (e.g. in the connection handshake): look at the chain first.
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage() == null ? "" : t.getMessage();
            if (m.contains("NOAUTH") || m.contains("WRONGPASS") || m.contains("NOPERM")) {
                return ErrorCode.AUTH;
            }
        }
        if (e instanceof RedisCommandTimeoutException) {
            return ErrorCode.TIMEOUT;
        }
        if (e instanceof RedisConnectionException || e instanceof RedisCommandInterruptedException) {
            return ErrorCode.UNAVAILABLE;
        }
        String message = e.getMessage() == null ? "" : e.getMessage();
        if (e instanceof RedisCommandExecutionException) {
            if (message.startsWith("WRONGTYPE")) {
                return ErrorCode.INVALID_ARGUMENT;
            }
            if (message.startsWith("READONLY") || message.startsWith("LOADING") || message.startsWith("CLUSTERDOWN")
                    || message.startsWith("MASTERDOWN") || message.startsWith("TRYAGAIN") || message.startsWith("BUSY")
                    || message.startsWith("NOREPLICAS") || message.startsWith("OOM")) {
                return ErrorCode.UNAVAILABLE;
            }
            // Errors raised inside a script carry the inner error after the script location.
            if (message.contains("WRONGTYPE")) {
                return ErrorCode.INVALID_ARGUMENT;
            }
            return ErrorCode.INTERNAL;
        }
        // A reset or closed socket (the network, a proxy, a killed server) is an outage, whatever the wording.
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.IOException) {
                return ErrorCode.UNAVAILABLE;
            }
        }
        if (message.toLowerCase(java.util.Locale.ROOT).contains("connection")) {
            return ErrorCode.UNAVAILABLE;
        }
        return ErrorCode.INTERNAL;
    }
}
