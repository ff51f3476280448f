package dev.fenceguard.core.leader;

/**
 * Where a {@link LeaderElection} counts its terms (meters {@code fenceguard.leader.elections},
 * {@code fenceguard.leader.term} and {@code fenceguard.leader.renew.failures}, see {@code docs/metrics.md}).
 * {@link #automatic()} uses Micrometer's global registry when Micrometer is on the class path and does
 * nothing otherwise; pass {@link dev.fenceguard.core.micrometer.MicrometerLeaderMetrics#of} to use a registry
 * of your own. Implementations must be fast and thread-safe; one that throws is logged and ignored.
 *
 * @since 0.1
 */
public interface LeaderMetrics {

    /** This process was elected leader of {@code leadership} for term {@code term}. */
    void elected(String leadership, long term);

    /**
     * This process's term of {@code leadership} ended; {@code lost} if it was taken from it (renewal refused
     * or unconfirmed, or the process paused past its lease) rather than given up.
     */
    void termEnded(String leadership, boolean lost);

    /** Micrometer's global registry if Micrometer is present, otherwise {@link #none()}. */
    static LeaderMetrics automatic() {
        return dev.fenceguard.core.internal.Micrometer.present() ? dev.fenceguard.core.micrometer.MicrometerLeaderMetrics.global() : none();
    }

    /** Metrics that record nothing (and are not even called). */
    static LeaderMetrics none() {
        return NoLeaderMetrics.INSTANCE;
    }
}

enum NoLeaderMetrics implements LeaderMetrics {
    INSTANCE;

    @Override
    public void elected(String leadership, long term) {}

    @Override
    public void termEnded(String leadership, boolean lost) {}
}
