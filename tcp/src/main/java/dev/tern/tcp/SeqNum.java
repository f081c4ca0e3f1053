package dev.tern.tcp;

/**
 * Sequence number arithmetic modulo 2^32 (RFC 9293 §3.4): "all arithmetic dealing with sequence numbers must be
 * performed modulo 2**32". A comparison asks which of two numbers comes first on the circle, so it holds for numbers
 * less than 2^31 apart, which every window is. Sequence numbers are Java ints holding the 32 bits; code never
 * compares them with {@code <}, only through these helpers. Timestamps (RFC 7323 §5.2) follow the same rules.
 *
 * <p>Stateless.
 */
public final class SeqNum {
    private SeqNum() {
    }

    /** {@code a} comes before {@code b}. */
    public static boolean lt(int a, int b) {
        return a - b < 0;
    }

    public static boolean le(int a, int b) {
        return a - b <= 0;
    }

    public static boolean gt(int a, int b) {
        return a - b > 0;
    }

    public static boolean ge(int a, int b) {
        return a - b >= 0;
    }

    /** Bytes from {@code from} to {@code to}; negative when {@code to} comes first. */
    public static int diff(int to, int from) {
        return to - from;
    }

    /** The later of two sequence numbers. */
    public static int max(int a, int b) {
        return a - b >= 0 ? a : b;
    }

    /** The earlier of two sequence numbers. */
    public static int min(int a, int b) {
        return a - b <= 0 ? a : b;
    }

    /** {@code start <= x < start + size}, for a window {@code size} below 2^31 (an empty window holds nothing). */
    public static boolean inWindow(int x, int start, int size) {
        return Integer.compareUnsigned(x - start, size) < 0;
    }

    /** {@code low <= x <= high}. */
    public static boolean between(int x, int low, int high) {
        return Integer.compareUnsigned(x - low, high - low) <= 0 && le(low, high);
    }
}
