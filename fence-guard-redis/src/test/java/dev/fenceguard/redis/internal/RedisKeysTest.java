package dev.fenceguard.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The fence keys of guarded resource keys are stored layout: their slot tags must never change. */
class RedisKeysTest {

    @Test
    void slotTagsFoundOnDemandAreTheFirstBase36NumberOfTheirSlot() {
        // The tags as first built, for all slots at once: the first n (base 36) hashing to each slot.
        String[] table = new String[SlotHash.SLOT_COUNT];
        int missing = table.length;
        for (long n = 0; missing > 0; n++) {
            String candidate = Long.toString(n, 36);
            int slot = SlotHash.getSlot(candidate);
            if (table[slot] == null) {
                table[slot] = candidate;
                missing--;
            }
        }
        SplittableRandom random = new SplittableRandom(20);
        for (int i = 0; i < 200; i++) {
            int slot = random.nextInt(SlotHash.SLOT_COUNT);
            assertThat(RedisKeys.SlotTags.of(slot)).as("tag of slot %d", slot).isEqualTo(table[slot]);
        }
        RedisKeys.fillSlotTags();
        for (int slot = 0; slot < SlotHash.SLOT_COUNT; slot++) {
            assertThat(RedisKeys.SlotTags.of(slot)).as("tag of slot %d after the scan finished", slot).isEqualTo(table[slot]);
        }
        String key = "stock:sku-1";
        assertThat(RedisKeys.resourceFenceKey("fg:fence:", key)).isEqualTo("fg:fence:{" + table[SlotHash.getSlot(key)] + "}:" + key);
        assertThat(SlotHash.getSlot(RedisKeys.resourceFenceKey("fg:fence:", key))).isEqualTo(SlotHash.getSlot(key));
    }

    @Test
    void knownFenceKeysKeepTheirNames() {
        // Pinned from the layout before tags were found per slot (stored data depends on these names).
        assertThat(RedisKeys.resourceFenceKey("fg:fence:", "order:1")).isEqualTo(PINNED_ORDER_1);
        assertThat(RedisKeys.resourceFenceKey("fg:fence:", "stock:sku-1")).isEqualTo(PINNED_STOCK);
    }

    private static final String PINNED_ORDER_1 = "fg:fence:{46w}:order:1";
    private static final String PINNED_STOCK = "fg:fence:{n4o}:stock:sku-1";
}
