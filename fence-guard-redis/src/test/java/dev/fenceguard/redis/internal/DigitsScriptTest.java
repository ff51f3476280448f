package dev.fenceguard.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * digits.lua, the number printer of the lock scripts, run on the test Redis: every whole number a script can
 * print (|n| < 2^53) must come out as Java's own decimal text, in particular at the edges of its two halves,
 * where a division rounded up would make the low half negative. It touches no key.
 */
class DigitsScriptTest {

    private static final long MAX_EXACT = (1L << 53) - 1;

    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisURI.create(TestRedis.server().uri()));
        connection = client.connect();
    }

    @AfterAll
    static void close() {
        connection.close();
        client.shutdown();
    }

    /** The decimal texts digits() prints for {@code numbers}, each sent as its own exact decimal text. */
    private static List<String> printed(List<Long> numbers) {
        String script = Script.load("digits").source()
                + "\nlocal out = {}\nfor i, a in ipairs(ARGV) do out[i] = digits(tonumber(a)) end\nreturn out";
        String[] args = numbers.stream().map(String::valueOf).toArray(String[]::new);
        return connection.sync().eval(script, ScriptOutputType.MULTI, new String[0], args);
    }

    private static List<String> javaText(List<Long> numbers) {
        return numbers.stream().map(String::valueOf).toList();
    }

    @Test
    void printsTheEdgesOfEachHalfAsJavaDoes() {
        List<Long> edges = new ArrayList<>(List.of(0L, 1L, 9L, 10L, 999_999_999L, 1_000_000_000L, 1_000_000_001L,
                1_999_999_999L, 2_000_000_000L, 2_147_483_647L, 2_147_483_648L, 4_294_967_296L,
                1_735_689_600_000L, 1_735_689_600_000_000L, 900_000_000_000_000L, 899_999_999_999_999L,
                999_999_999_999_999L, 1_000_000_000_000_000L, MAX_EXACT, MAX_EXACT - 1));
        // Around k * 1e9 for the largest k below 2^53, where n / 1e9 comes nearest to a whole number in a double
        // (the halves are cut with math.fmod, exact, so that no rounding of that quotient can shift them).
        for (long k = MAX_EXACT / 1_000_000_000L; k > MAX_EXACT / 1_000_000_000L - 50; k--) {
            edges.add(k * 1_000_000_000L - 1);
            edges.add(k * 1_000_000_000L);
            edges.add(k * 1_000_000_000L + 1);
        }
        assertThat(printed(edges)).as("digits() of %s", edges).isEqualTo(javaText(edges));
    }

    @Test
    void printsNegativeNumbersAsJavaDoes() {
        List<Long> negatives = List.of(-1L, -999_999_999L, -1_000_000_000L, -1_000_000_001L, -2_147_483_649L,
                -3_000_000_000_000L, -MAX_EXACT);
        assertThat(printed(negatives)).as("digits() of %s", negatives).isEqualTo(javaText(negatives));
    }

    @Test
    void printsRandomWholeNumbersBelowTwoToThe53AsJavaDoes() {
        SplittableRandom random = new SplittableRandom(31);
        List<Long> numbers = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            // Half spread over the whole range, half over the range fences and instants in ms occupy today.
            numbers.add(i % 2 == 0 ? random.nextLong(MAX_EXACT + 1) : random.nextLong(1_000_000_000_000L, 100_000_000_000_000L));
        }
        assertThat(printed(numbers)).as("digits() of 2,000 numbers (seed 31)").isEqualTo(javaText(numbers));
    }
}
