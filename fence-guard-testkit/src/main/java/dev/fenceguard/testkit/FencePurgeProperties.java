package dev.fenceguard.testkit;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.testkit.internal.WriterSchedule;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * A property-test template that proves a store's purge of fence records safe (docs/fence-lifecycle.md):
 * purges interleaved with writes, deletes and claims from live leases and from zombies holding old
 * fences. Two properties, on every generated history and on a fixed set of known races every run:
 * <ul>
 *   <li><b>no stale write is ever applied</b>: once a key has recorded fence {@code F}, no write, delete
 *       or claim with a fence the rule refuses against {@code F} changes it, even after a purge removed
 *       the record that held {@code F} (the horizon refuses it then, {@code BELOW_HORIZON});</li>
 *   <li><b>one purge is enough and takes nothing it must keep</b>: after a purge, every tombstone whose
 *       fence is below {@code tick(clock - horizon - clockMargin)} (read before the purge) is gone, and
 *       every live record and every tombstone at or above that horizon (read after it) is still there,
 *       with its fence.</li>
 * </ul>
 * Every outcome ({@code Applied}, {@code Stale} with its reason and fence, {@code NotFound}) and the fence
 * record after every step are checked against the rule, so a store that refuses too much fails as well.
 *
 * <p>Fences are chosen relative to the store's own clock ({@link #storeClock()}), read when each history
 * starts: zombies far below the purge horizon, one just below it, one between the purge horizon and the
 * write horizon (inside the clock margin, when the margin is at least 2 minutes), and live leases a few
 * minutes above the write horizon. The rungs are at least a minute apart from each horizon, so a history
 * that ends within a minute of the store's clock (it fails if it does not) judges every write the same
 * way whenever the store reads its clock. Records older than the horizon cannot be made through the rule
 * (that is the rule), so a history starts by {@link #plant planting} some: a tombstone or a live record
 * with an old fence, as a write made long ago would have left it.
 *
 * <pre>{@code
 * class OrderPurgeProperties extends FencePurgeProperties {
 *     protected Duration horizon() { return Duration.ofHours(1); }                  // as ORDERS was built
 *     protected Instant storeClock() { return db.clock(); }                          // SELECT clock_timestamp(): the store's clock
 *     protected WriteOutcome write(String key, FenceToken f, Pause p) {
 *         return ORDERS.on(db.dataSource()).upsert(key, f, Assignments.of("status", "paid"));
 *     }
 *     protected WriteOutcome delete(String key, FenceToken f, Pause p) { return ORDERS.on(db.dataSource()).delete(key, f); }
 *     protected WriteOutcome claim(String key, FenceToken f, Pause p) { return ORDERS.on(db.dataSource()).claim(key, f); }
 *     protected void purge(Pause p) { db.purgeToTheEnd(ORDERS); }                   // resumed from its cursor until complete
 *     protected Optional<FenceRecord> record(String key) { return db.fenceRecord(key); }
 *     protected void plant(String key, FenceRecord r) { db.insertDirectly(key, r); } // an old record, as a write long ago left it
 * }
 * }</pre>
 *
 * <h2>A purge beside a write, scheduled by the template</h2>
 * Some steps run one write and a purge at once, on two threads, with the scheduling of
 * {@link FencedResourceProperties}: a path made of several calls (a purge that selects, then deletes)
 * calls {@link Pause#pause()} where a real process could stall, and the template decides who goes on.
 * In a <em>gated</em> step the write waits at its start until the purge has paused or finished, then the
 * generated release order decides, so a purge that deletes what it selected without checking it again is
 * caught whenever the write is let go first (and {@link #knownRaces()} does that on every run). In a
 * <em>free</em> step both run at once, for the store's own concurrency (row locks, {@code SKIP LOCKED}).
 * Either way the outcome must be explained by the write before or after the purge, or by a purge that
 * skipped the key the write held; the purge's other keys are checked as after any purge.
 *
 * <p>Each history uses keys of its own ({@code pp-<random>-<n>}); the store may hold other histories'
 * records, which a purge may remove (they are not checked). Subclasses are instantiated by jqwik once per
 * property; their records should live in a schema, key prefix or project of their own.
 *
 * @since 0.1
 */
public abstract class FencePurgeProperties {

    /** A point in a path where a process could stall; see {@link FencedResourceProperties.Pause}. */
    public interface Pause {
        /** In a step with a write and a purge at once, blocks until the template lets this one go on. */
        void pause();
    }

    /**
     * A key's fence record as the store keeps it.
     *
     * @param fence the fence it holds
     * @param live whether it holds data ({@code false}: a tombstone, left by a delete or by a claim of an absent key)
     */
    public record FenceRecord(long fence, boolean live) {
        /** @throws IllegalArgumentException if {@code fence} is below 1 */
        public FenceRecord {
            if (fence < 1) {
                throw new IllegalArgumentException("fence must be at least 1, was " + fence);
            }
        }

        @Override
        public String toString() {
            return (live ? "live@" : "tombstone@") + fence;
        }
    }

    /** What a step does to a key. */
    public enum Operation {
        /** {@link #write}: a fenced create-or-replace. */
        WRITE,
        /** {@link #delete}: a fenced delete that leaves a tombstone. */
        DELETE,
        /** {@link #claim}: records the fence, data unchanged (a tombstone on an absent key). */
        CLAIM
    }

    /** Where a fence sits against the store's horizons when a history starts. */
    public enum Rung {
        /** 20 minutes below the purge horizon {@code tick(clock - horizon - clockMargin)}: an old zombie. */
        ANCIENT,
        /** 10 minutes below the purge horizon. */
        OLD,
        /** One tick below the purge horizon: the youngest fence a purge may remove. */
        JUST_PURGEABLE,
        /** Halfway between the purge horizon and the write horizon (5 minutes below the purge horizon if the margin is under 2 minutes). */
        IN_MARGIN,
        /** A minute above the write horizon {@code tick(clock - horizon)}: a lease that may still create. */
        LIVE_1,
        /** Two minutes above the write horizon. */
        LIVE_2,
        /** Three minutes above the write horizon. */
        LIVE_3;

        boolean belowWriteHorizon() {
            return ordinal() < LIVE_1.ordinal();
        }
    }

    /** One action: {@code operation} on key {@code key} with the fence at {@code rung}. */
    public record Action(int key, Operation operation, Rung rung) {
        public Action {
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(rung, "rung");
        }

        @Override
        public String toString() {
            return operation.name().toLowerCase(Locale.ROOT) + " k" + key + " at " + rung;
        }
    }

    /**
     * One step: a purge ({@code action} null), one action, or one action beside a purge. For the last,
     * {@code gated} says whether the action waits at its start for the purge to pause or finish, and
     * {@code actionFirst} whether the first release goes to the action (else to the purge).
     */
    public record Step(Action action, boolean purge, boolean gated, boolean actionFirst) {
        public Step {
            if (action == null && !purge) {
                throw new IllegalArgumentException("a step does an action, a purge, or both");
            }
        }

        static Step purgeOnly() {
            return new Step(null, true, false, false);
        }

        static Step of(Action a) {
            return new Step(a, false, false, false);
        }

        static Step beside(Action a, boolean gated, boolean actionFirst) {
            return new Step(a, true, gated, actionFirst);
        }

        @Override
        public String toString() {
            if (action == null) {
                return "purge";
            }
            return purge ? action + " beside a purge (" + (gated ? (actionFirst ? "gated, action first" : "gated, purge first") : "free") + ")"
                    : action.toString();
        }
    }

    /** A record planted before the history: on key {@code key}, a tombstone or a live record at {@code rung}. */
    public record Planted(int key, Rung rung, boolean live) {
        public Planted {
            Objects.requireNonNull(rung, "rung");
            if (!rung.belowWriteHorizon()) {
                throw new IllegalArgumentException("planted records are old, below the write horizon; was " + rung);
            }
        }

        @Override
        public String toString() {
            return "k" + key + " " + (live ? "live" : "tombstone") + " at " + rung;
        }
    }

    /** A history: the old records planted first, then the steps. */
    public record History(List<Planted> planted, List<Step> steps) {
        public History {
            planted = List.copyOf(planted);
            steps = List.copyOf(steps);
        }

        @Override
        public String toString() {
            return "planted " + planted + ", steps " + steps;
        }
    }

    /** The horizon age the store under test was built with ({@code withHorizon}). */
    protected abstract Duration horizon();

    /** The clock margin the store under test was built with; default {@code 5 minutes}, the builders' default. */
    protected Duration clockMargin() {
        return Horizon.DEFAULT_MARGIN;
    }

    /** The store's clock now, as the store reads it in its writes and purges (not the JVM's clock). */
    protected abstract Instant storeClock() throws Exception;

    /** A fenced create-or-replace of {@code key} (an upsert, a Redis {@code SET}, a Firestore {@code set}). */
    protected abstract WriteOutcome write(String key, FenceToken fence, Pause pause) throws Exception;

    /** A fenced delete of {@code key} that leaves a tombstone holding {@code fence}, whether the key existed or not. */
    protected abstract WriteOutcome delete(String key, FenceToken fence, Pause pause) throws Exception;

    /** A fenced claim of {@code key}: records {@code fence}, data unchanged; on an absent key a tombstone. */
    protected abstract WriteOutcome claim(String key, FenceToken fence, Pause pause) throws Exception;

    /** One purge of the store's records, through to its end (resumed from its cursor until it is complete). */
    protected abstract void purge(Pause pause) throws Exception;

    /** {@code key}'s fence record, or empty when the store holds none. */
    protected abstract Optional<FenceRecord> record(String key) throws Exception;

    /**
     * Stores {@code record} for {@code key}, which has none, directly (not through the rule, which would
     * refuse a fence this old): what a write made long ago, when its fence was above the horizon, left.
     */
    protected abstract void plant(String key, FenceRecord record) throws Exception;

    /**
     * Whether the store removes records the rule lets go on its own, without waiting for {@link #purge}
     * (Redis gives a tombstone an expiry at {@code horizon + clockMargin} past its fence's tick). Default
     * false. When true, a tombstone below the purge horizon may be gone at any step, planted or left by a
     * delete or a claim: the template accepts it gone and reads such records before each step instead of
     * expecting them (an action on one that is gone by the time it runs may be judged as on a key with no
     * record), and {@code purge} need only let the store's expiry catch up with the purge horizon.
     * Everything else is checked as for any store.
     */
    protected boolean removesOnItsOwn() {
        return false;
    }

    /** The write rule the store implements; default {@link FencePolicy#SAME_OR_NEWER}. */
    protected FencePolicy policy() {
        return FencePolicy.SAME_OR_NEWER;
    }

    /** How long the template waits for a path to pause or finish before the property fails; default 60 s. */
    protected Duration writerGuard() {
        return Duration.ofSeconds(60);
    }

    /** Ticks per minute. */
    private static final long MINUTE = 60_000L * ClockFloor.PER_MILLISECOND;

    @Property(tries = 60)
    void purgesNeverReadmitAStaleWriteAndRemoveWhatTheRuleLetsGo(@ForAll("histories") History history) throws Exception {
        check(history);
    }

    /**
     * Histories every run tries: zombies after a purge removed the record they are older than, a tombstone
     * inside the margin kept, live records kept, and a write or a delete that raises a purgeable tombstone
     * beside a purge, with the write let go first and last, gated and free.
     */
    @Example
    void knownRaces() throws Exception {
        for (History h : knownHistories()) {
            check(h);
        }
    }

    List<History> knownHistories() {
        List<History> known = new ArrayList<>();
        known.add(new History(List.of(new Planted(1, Rung.JUST_PURGEABLE, false), new Planted(2, Rung.ANCIENT, false)),
                List.of(Step.purgeOnly(), Step.of(new Action(1, Operation.WRITE, Rung.OLD)),
                        Step.of(new Action(1, Operation.WRITE, Rung.JUST_PURGEABLE)), Step.of(new Action(2, Operation.CLAIM, Rung.OLD)),
                        Step.of(new Action(1, Operation.DELETE, Rung.IN_MARGIN)), Step.of(new Action(1, Operation.WRITE, Rung.LIVE_1)),
                        Step.of(new Action(2, Operation.CLAIM, Rung.LIVE_1)), Step.purgeOnly())));
        known.add(new History(List.of(new Planted(1, Rung.IN_MARGIN, false), new Planted(2, Rung.ANCIENT, true)),
                List.of(Step.purgeOnly(), Step.of(new Action(1, Operation.WRITE, Rung.JUST_PURGEABLE)),
                        Step.of(new Action(2, Operation.WRITE, Rung.OLD)), Step.of(new Action(2, Operation.DELETE, Rung.LIVE_2)),
                        Step.purgeOnly())));
        for (Operation op : List.of(Operation.WRITE, Operation.DELETE, Operation.CLAIM)) {
            for (boolean actionFirst : new boolean[] {true, false}) {
                known.add(new History(List.of(new Planted(1, Rung.OLD, false), new Planted(2, Rung.ANCIENT, false)),
                        List.of(Step.beside(new Action(1, op, Rung.LIVE_1), true, actionFirst),
                                Step.of(new Action(1, Operation.WRITE, Rung.OLD)))));
            }
            known.add(new History(List.of(new Planted(1, Rung.OLD, false)),
                    List.of(Step.beside(new Action(1, op, Rung.LIVE_1), false, false), Step.of(new Action(1, Operation.CLAIM, Rung.OLD)))));
        }
        return known;
    }

    /** The fence at each rung, from the store's clock when the history starts. */
    private record Ladder(long purgeHorizon, long writeHorizon, long[] fences, long startMicros) {
        long fence(Rung r) {
            return fences[r.ordinal()];
        }
    }

    private Ladder ladder() throws Exception {
        long now = micros(storeClock());
        Horizon h = new Horizon(horizon(), clockMargin());
        long p = ClockFloor.floorAtMicros(now - h.purgeMicros());
        long w = ClockFloor.floorAtMicros(now - h.ageMicros());
        long margin = w - p;
        long inMargin = margin >= 2 * MINUTE ? p + margin / 2 : p - 5 * MINUTE;
        long[] fences = {p - 20 * MINUTE, p - 10 * MINUTE, p - 1, inMargin, w + MINUTE, w + 2 * MINUTE, w + 3 * MINUTE};
        if (fences[0] < 1) {
            throw new IllegalStateException("the store's clock (" + storeClock() + ") is too close to the clock floor's epoch for a"
                    + " horizon of " + horizon() + " and a margin of " + clockMargin());
        }
        return new Ladder(p, w, fences, now);
    }

    private static long micros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    private long purgeHorizonAt(Instant t) {
        return ClockFloor.floorAtMicros(micros(t) - new Horizon(horizon(), clockMargin()).purgeMicros());
    }

    private void check(History history) throws Exception {
        String prefix = "pp-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Ladder ladder = ladder();
        Map<Integer, FenceRecord> model = new HashMap<>();
        Map<Integer, Long> highest = new HashMap<>(); // the highest fence each key ever recorded, purged or not
        List<String> timeline = new ArrayList<>();
        timeline.add("write horizon " + ladder.writeHorizon() + ", purge horizon " + ladder.purgeHorizon() + "; rungs "
                + rungs(ladder));
        for (Planted pl : history.planted()) {
            if (model.containsKey(pl.key())) {
                continue;
            }
            FenceRecord r = new FenceRecord(ladder.fence(pl.rung()), pl.live());
            plant(prefix + pl.key(), r);
            model.put(pl.key(), r);
            highest.put(pl.key(), r.fence());
            timeline.add("planted " + pl + " (" + r + ")");
        }
        for (int i = 0; i < history.steps().size(); i++) {
            Step s = history.steps().get(i);
            if (removesOnItsOwn()) {
                expired(prefix, model, ladder.purgeHorizon(), timeline);
            }
            if (s.action() == null) {
                Instant before = storeClock();
                purge(() -> {});
                Instant after = storeClock();
                timeline.add("step " + i + ": purge (purge horizon " + purgeHorizonAt(before) + " .. " + purgeHorizonAt(after) + ")");
                afterPurge(prefix, model, -1, purgeHorizonAt(before), purgeHorizonAt(after), timeline);
            } else if (!s.purge()) {
                Action a = s.action();
                WriteOutcome got = perform(prefix, a, ladder, () -> {});
                // A store that removes on its own may drop a purgeable tombstone after the read before this step and
                // before the action ran (Redis, whose expiry trails the purge horizon by a millisecond or two): either explains.
                Judged j = judge(a, ladder, model.get(a.key()));
                for (FenceRecord start : expiring(model.get(a.key()), ladder)) {
                    Judged k = judge(a, ladder, start);
                    if (k.matches(got)) {
                        j = k;
                        break;
                    }
                }
                timeline.add("step " + i + ": " + a + " -> " + describe(got) + " (record was " + describe(model.get(a.key())) + ")");
                noStaleWriteApplied(a, got, ladder, highest, timeline);
                Timeline.require(j.matches(got), "outcome contradicts the rule (expected " + j.expected() + ")", timeline);
                Optional<FenceRecord> now = record(prefix + a.key());
                timeline.add("        record now " + describe(now.orElse(null)));
                Timeline.require(expiring(j.after(), ladder).contains(now.orElse(null)), "the store holds " + describe(now.orElse(null))
                        + " but the rule says " + describe(j.after()), timeline);
                set(model, a.key(), now.orElse(null));
            } else {
                besidePurge(prefix, i, s, ladder, model, highest, timeline);
            }
            model.forEach((k, r) -> highest.merge(k, r.fence(), Math::max));
        }
        long took = micros(storeClock()) - ladder.startMicros();
        Timeline.require(took < 55_000_000L, "the history took " + took / 1000 + " ms of the store's clock: its rungs are a minute from"
                + " the horizons, so it must end within a minute", timeline);
    }

    private void besidePurge(String prefix, int i, Step s, Ladder ladder, Map<Integer, FenceRecord> model, Map<Integer, Long> highest,
            List<String> timeline) throws Exception {
        Action a = s.action();
        FenceRecord was = model.get(a.key());
        List<WriterSchedule.Writer<WriteOutcome>> paths = new ArrayList<>();
        paths.add(pause -> {
            if (s.gated()) {
                pause.run(); // released only once the purge has paused or finished
            }
            return perform(prefix, a, ladder, pause::run);
        });
        paths.add(pause -> {
            purge(pause::run);
            return null;
        });
        // At the first release both are waiting only when gated; releases pick the first (the action) or the last (the purge).
        List<Boolean> order = new ArrayList<>();
        order.add(!s.actionFirst());
        for (int k = 0; k < 64; k++) {
            order.add(k % 2 == 0 ? s.actionFirst() : !s.actionFirst());
        }
        Instant before = storeClock();
        List<WriteOutcome> got;
        try {
            got = WriterSchedule.run(paths, order, writerGuard());
        } catch (WriterSchedule.StuckWriterException e) {
            timeline.add("step " + i + ": " + s + ": " + e.getMessage());
            throw Timeline.failure("a path never finished", timeline, e);
        }
        Instant after = storeClock();
        long pb = purgeHorizonAt(before);
        long pa = purgeHorizonAt(after);
        WriteOutcome out = got.getFirst();
        timeline.add("step " + i + ": " + s + " -> " + describe(out) + " (record was " + describe(was) + "; purge horizon " + pb
                + " .. " + pa + ")");
        noStaleWriteApplied(a, out, ladder, highest, timeline);
        Optional<FenceRecord> now = record(prefix + a.key());
        timeline.add("        record now " + describe(now.orElse(null)));
        // Serial orders for the action's key: purge then action, action then purge, or a purge that skipped the key.
        List<FenceRecord> beforeAction = new ArrayList<>(purged(was, pb, pa));
        beforeAction.add(was);
        FenceRecord explained = null;
        boolean found = false;
        for (FenceRecord start : beforeAction) {
            Judged j = judge(a, ladder, start);
            if (!j.matches(out)) {
                continue;
            }
            List<FenceRecord> ends = new ArrayList<>(purged(j.after(), pb, pa));
            ends.addAll(expiring(j.after(), ladder));
            for (FenceRecord end : ends) {
                if (now.equals(Optional.ofNullable(end))) {
                    explained = end;
                    found = true;
                }
            }
        }
        Timeline.require(found, "no order of the " + a.operation().name().toLowerCase(Locale.ROOT) + " and the purge explains the outcome "
                + describe(out) + " and the record " + describe(now.orElse(null)), timeline);
        set(model, a.key(), explained);
        afterPurge(prefix, model, a.key(), pb, pa, timeline);
    }

    /** {@code r}, or also none when the store removes on its own and {@code r} is a tombstone below the purge horizon. */
    private List<FenceRecord> expiring(FenceRecord r, Ladder ladder) {
        if (removesOnItsOwn() && r != null && !r.live() && r.fence() < ladder.purgeHorizon()) {
            return java.util.Arrays.asList(r, null);
        }
        return java.util.Collections.singletonList(r);
    }

    /** For a store that removes on its own: tombstones below the purge horizon read as they are now, kept or gone, nothing else. */
    private void expired(String prefix, Map<Integer, FenceRecord> model, long purgeHorizon, List<String> timeline) throws Exception {
        for (Integer k : new ArrayList<>(model.keySet())) {
            FenceRecord was = model.get(k);
            if (was.live() || was.fence() >= purgeHorizon) {
                continue;
            }
            Optional<FenceRecord> now = record(prefix + k);
            Timeline.require(now.isEmpty() || now.get().equals(was), "k" + k + " was " + was + " and reads " + describe(now.orElse(null))
                    + ": a tombstone may expire, not change", timeline);
            if (now.isEmpty()) {
                timeline.add("        k" + k + " " + was + " expired");
                model.remove(k);
            }
        }
    }

    /** What a purge with horizons between {@code pb} and {@code pa} may leave of {@code r}: both when it may go or stay. */
    private static List<FenceRecord> purged(FenceRecord r, long pb, long pa) {
        if (r == null || r.live() || r.fence() >= pa) {
            return java.util.Collections.singletonList(r);
        }
        return r.fence() < pb ? java.util.Collections.singletonList(null) : java.util.Arrays.asList(null, r);
    }

    /** Every key but {@code skip}: tombstones below {@code pb} gone, everything else as it was (between the two: either). */
    private void afterPurge(String prefix, Map<Integer, FenceRecord> model, int skip, long pb, long pa, List<String> timeline)
            throws Exception {
        for (Integer k : new ArrayList<>(model.keySet())) {
            if (k == skip) {
                continue;
            }
            FenceRecord was = model.get(k);
            Optional<FenceRecord> now = record(prefix + k);
            List<FenceRecord> allowed = purged(was, pb, pa);
            if (!allowed.contains(now.orElse(null))) {
                timeline.add("        k" + k + " now " + describe(now.orElse(null)));
                String why = was.live() ? "a live record must never be purged"
                        : was.fence() < pb ? "a tombstone below the purge horizon must be gone after one purge"
                        : "a tombstone at or above the purge horizon must stay";
                Timeline.require(false, "k" + k + " was " + was + ": " + why, timeline);
            }
            set(model, k, now.orElse(null));
        }
    }

    private static void set(Map<Integer, FenceRecord> model, int key, FenceRecord r) {
        if (r == null) {
            model.remove(key);
        } else {
            model.put(key, r);
        }
    }

    /** The safety property on its own, with its own words: an applied write or delete never goes below a fence the key recorded. */
    private void noStaleWriteApplied(Action a, WriteOutcome got, Ladder ladder, Map<Integer, Long> highest, List<String> timeline) {
        long f = ladder.fence(a.rung());
        long seen = highest.getOrDefault(a.key(), 0L);
        boolean recorded = got instanceof WriteOutcome.Applied || (got instanceof WriteOutcome.NotFound && a.operation() == Operation.CLAIM);
        if (recorded) {
            Timeline.require(policy().admits(f, seen), "STALE WRITE APPLIED: " + a + " (fence " + f + ") after k" + a.key() + " recorded fence "
                    + seen, timeline);
            highest.merge(a.key(), f, Math::max); // kept even if the record is purged or expires
        }
    }

    /** The outcome the rule expects of {@code a} against {@code before} (null: no record), and the record after it. */
    private record Judged(String expected, FenceRecord after, Long currentFence, WriteOutcome.Stale.Reason reason, long horizon) {
        boolean matches(WriteOutcome got) {
            return switch (got) {
                case WriteOutcome.Applied ap -> expected.equals("Applied");
                case WriteOutcome.NotFound n -> expected.equals("NotFound");
                case WriteOutcome.Stale s -> expected.equals("Stale") && s.reason() == reason
                        && (reason == WriteOutcome.Stale.Reason.NEWER_FENCE ? s.currentFence() == currentFence
                                : s.currentFence() >= horizon && s.currentFence() < horizon + MINUTE);
            };
        }
    }

    private Judged judge(Action a, Ladder ladder, FenceRecord before) {
        long f = ladder.fence(a.rung());
        long w = ladder.writeHorizon();
        if (before == null) {
            if (f <= w) {
                return new Judged("Stale", null, null, WriteOutcome.Stale.Reason.BELOW_HORIZON, w);
            }
            return switch (a.operation()) {
                case WRITE -> new Judged("Applied", new FenceRecord(f, true), null, null, w);
                case DELETE -> new Judged("Applied", new FenceRecord(f, false), null, null, w);
                case CLAIM -> new Judged("NotFound", new FenceRecord(f, false), null, null, w);
            };
        }
        if (!policy().admits(f, before.fence())) {
            return new Judged("Stale", before, before.fence(), WriteOutcome.Stale.Reason.NEWER_FENCE, w);
        }
        return switch (a.operation()) {
            case WRITE -> new Judged("Applied", new FenceRecord(f, true), null, null, w);
            case DELETE -> new Judged("Applied", new FenceRecord(f, false), null, null, w);
            case CLAIM -> new Judged(before.live() ? "Applied" : "NotFound", new FenceRecord(f, before.live()), null, null, w);
        };
    }

    private WriteOutcome perform(String prefix, Action a, Ladder ladder, Pause pause) throws Exception {
        String key = prefix + a.key();
        FenceToken fence = FenceToken.of(ladder.fence(a.rung()));
        return Objects.requireNonNull(switch (a.operation()) {
            case WRITE -> write(key, fence, pause);
            case DELETE -> delete(key, fence, pause);
            case CLAIM -> claim(key, fence, pause);
        }, "the path under test returned no outcome");
    }

    private static String rungs(Ladder l) {
        StringBuilder b = new StringBuilder();
        for (Rung r : Rung.values()) {
            b.append(b.isEmpty() ? "" : ", ").append(r).append('=').append(l.fence(r));
        }
        return b.toString();
    }

    private static String describe(FenceRecord r) {
        return r == null ? "none" : r.toString();
    }

    private static String describe(WriteOutcome o) {
        return switch (o) {
            case WriteOutcome.Applied a -> "Applied";
            case WriteOutcome.Stale s -> "Stale(" + s.reason() + ", current " + s.currentFence() + ")";
            case WriteOutcome.NotFound n -> "NotFound";
        };
    }

    @Provide
    Arbitrary<History> histories() {
        Arbitrary<Integer> key = Arbitraries.integers().between(1, 4);
        Arbitrary<Rung> rung = Arbitraries.of(Rung.class);
        Arbitrary<Action> action = Combinators.combine(key, Arbitraries.of(Operation.class), rung).as(Action::new);
        Arbitrary<Step> single = action.map(Step::of);
        Arbitrary<Step> beside = Combinators.combine(action, Arbitraries.of(true, false), Arbitraries.of(true, false)).as(Step::beside);
        Arbitrary<Step> step = Arbitraries.frequencyOf(Tuple.of(5, single), Tuple.of(2, Arbitraries.just(Step.purgeOnly())),
                Tuple.of(2, beside));
        Arbitrary<Planted> planted = Combinators.combine(key, Arbitraries.of(Rung.ANCIENT, Rung.OLD, Rung.JUST_PURGEABLE, Rung.IN_MARGIN),
                Arbitraries.of(false, false, true)).as(Planted::new);
        return Combinators.combine(planted.list().ofMaxSize(4), step.list().ofMinSize(1).ofMaxSize(12)).as(History::new);
    }
}
