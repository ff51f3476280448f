package dev.fenceguard.core.internal;

/** Text checks shared by the key validators of every module. */
public final class Text {

    private Text() {}

    /** Index of the first unpaired surrogate in {@code s} (text that has no UTF-8 form), or -1. */
    public static int unpairedSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * @throws IllegalArgumentException naming {@code what} and the position if {@code s} has an unpaired surrogate
     */
    public static void requireValidUnicode(String what, String s) {
        int at = unpairedSurrogate(s);
        if (at >= 0) {
            throw new IllegalArgumentException(String.format("%s must be valid Unicode, found an unpaired surrogate U+%04X at index %d",
                    what, (int) s.charAt(at), at));
        }
    }
}
