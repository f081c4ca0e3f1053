package dev.tern.lab.link;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * When a frame that starts on the link at some instant has left it: a constant rate in bits per second, or a
 * Mahimahi trace of delivery opportunities. A trace file holds one millisecond timestamp per line, non-decreasing;
 * each line is one opportunity to deliver {@link #OPPORTUNITY_BYTES} bytes, and the trace repeats with the last
 * timestamp as its period, as Mahimahi's link shell reads it. Bytes of an opportunity a frame does not use go to the
 * next frame in the same opportunity, or are lost when none is waiting.
 */
public final class LinkRate {
    /** The bytes of one Mahimahi delivery opportunity (its MTU-sized packet). */
    public static final int OPPORTUNITY_BYTES = 1504;

    private final long bitsPerSecond;
    private final long[] opportunitiesNs;
    private final long periodNs;
    /** The opportunity in use: its index in the current period, the period's start, and bytes left in it. */
    private int index = -1;
    private long cycleStartNs;
    private int leftBytes;

    private LinkRate(long bitsPerSecond, long[] opportunitiesNs, long periodNs) {
        this.bitsPerSecond = bitsPerSecond;
        this.opportunitiesNs = opportunitiesNs;
        this.periodNs = periodNs;
    }

    public static LinkRate constant(long bitsPerSecond) {
        if (bitsPerSecond <= 0) {
            throw new IllegalArgumentException("rate must be positive, got " + bitsPerSecond);
        }
        return new LinkRate(bitsPerSecond, null, 0);
    }

    /** A trace from its opportunities in milliseconds (non-decreasing, the last one positive). */
    public static LinkRate trace(long[] opportunitiesMs) {
        if (opportunitiesMs.length == 0 || opportunitiesMs[opportunitiesMs.length - 1] <= 0) {
            throw new IllegalArgumentException("a trace needs at least one opportunity after 0 ms");
        }
        final long[] ns = new long[opportunitiesMs.length];
        for (int i = 0; i < ns.length; i++) {
            if (opportunitiesMs[i] < 0 || i > 0 && opportunitiesMs[i] < opportunitiesMs[i - 1]) {
                throw new IllegalArgumentException("trace timestamps must be non-decreasing and not negative");
            }
            ns[i] = opportunitiesMs[i] * 1_000_000L;
        }
        return new LinkRate(0, ns, ns[ns.length - 1]);
    }

    /** Reads a Mahimahi trace file; a malformed line is reported as {@code FILE:LINE: reason}. */
    public static LinkRate readTrace(Path file) throws IOException {
        final List<String> lines = Files.readAllLines(file);
        final long[] ms = new long[lines.size()];
        int count = 0;
        long last = 0;
        for (int i = 0; i < lines.size(); i++) {
            final String line = lines.get(i).strip();
            if (line.isEmpty()) {
                continue;
            }
            final long value;
            try {
                value = Long.parseLong(line);
            } catch (NumberFormatException e) {
                throw new LabInputException(file + ":" + (i + 1) + ": not a millisecond timestamp: '" + line + "'");
            }
            if (value < last) {
                throw new LabInputException(file + ":" + (i + 1) + ": timestamp " + value + " is before " + last);
            }
            last = value;
            ms[count++] = value;
        }
        if (count == 0 || last <= 0) {
            throw new LabInputException(file + ":" + Math.max(1, lines.size()) + ": a trace needs an opportunity after 0 ms");
        }
        return trace(java.util.Arrays.copyOf(ms, count));
    }

    /** The same rate, starting afresh (a trace from its first opportunity): one per run. */
    public LinkRate fresh() {
        return new LinkRate(bitsPerSecond, opportunitiesNs, periodNs);
    }

    public boolean isTrace() {
        return opportunitiesNs != null;
    }

    public long bitsPerSecond() {
        return bitsPerSecond;
    }

    /** The instant a frame of {@code length} bytes that starts at {@code startNs} has been delivered. */
    public long finishNs(long startNs, int length) {
        if (opportunitiesNs == null) {
            return startNs + (length * 8_000_000_000L + bitsPerSecond - 1) / bitsPerSecond;
        }
        if (index < 0 || opportunityNs() - startNs < 0) {
            seek(startNs);
        }
        int remaining = length;
        while (remaining > leftBytes) {
            remaining -= leftBytes;
            advance();
        }
        leftBytes -= remaining;
        return opportunityNs();
    }

    /** The bytes this link could carry in {@code [fromNs, toNs)}: the capacity utilisation is measured against. */
    public long capacityBytes(long fromNs, long toNs) {
        if (opportunitiesNs == null) {
            return (toNs - fromNs) * bitsPerSecond / 8_000_000_000L;
        }
        return (opportunitiesBefore(toNs) - opportunitiesBefore(fromNs)) * OPPORTUNITY_BYTES;
    }

    private long opportunitiesBefore(long ns) {
        final long cycles = Math.floorDiv(ns, periodNs);
        final long within = ns - cycles * periodNs;
        int count = 0;
        while (count < opportunitiesNs.length && opportunitiesNs[count] < within) {
            count++;
        }
        return cycles * opportunitiesNs.length + count;
    }

    private long opportunityNs() {
        return cycleStartNs + opportunitiesNs[index];
    }

    /** Moves to the first opportunity at or after {@code ns}, with all its bytes. */
    private void seek(long ns) {
        cycleStartNs = Math.floorDiv(ns, periodNs) * periodNs;
        final long within = ns - cycleStartNs;
        int low = 0;
        int high = opportunitiesNs.length;
        while (low < high) {
            final int mid = (low + high) >>> 1;
            if (opportunitiesNs[mid] < within) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        index = low;
        if (index == opportunitiesNs.length) {
            index = 0;
            cycleStartNs += periodNs;
        }
        leftBytes = OPPORTUNITY_BYTES;
    }

    private void advance() {
        index++;
        if (index == opportunitiesNs.length) {
            index = 0;
            cycleStartNs += periodNs;
        }
        leftBytes = OPPORTUNITY_BYTES;
    }
}
