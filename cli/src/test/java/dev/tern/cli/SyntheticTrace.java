package dev.tern.cli;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A made-up connection written in the trace CSV contract, for tests: slow start from 10 segments, a fast
 * retransmit at a third of the records (recovery for a twentieth of them, ssthresh and cwnd halved), congestion
 * avoidance, a timeout at two thirds (loss, cwnd one segment), then slow start again. One record every 100 us.
 * Columns not in the contract get the value {@code extra<row>}.
 */
final class SyntheticTrace {
    static final List<String> CONTRACT = List.of("time_us", "snd_una", "snd_nxt", "cwnd", "ssthresh", "in_flight",
        "pipe", "srtt_us", "rttvar_us", "rto_us", "min_rtt_us", "sacked", "lost", "retrans", "delivered", "state",
        "pacing_bps");
    static final int MSS = 1448;
    static final long RECORD_INTERVAL_US = 100;

    private SyntheticTrace() {
    }

    /** Writes {@code rows} records with the given columns, in the given order, to {@code file}. */
    static Path write(Path file, List<String> columns, int rows) throws IOException {
        try (BufferedWriter writer = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            writer.write(String.join(",", columns));
            writer.write('\n');
            final List<String> fields = new ArrayList<>(columns.size());
            for (int row = 0; row < rows; row++) {
                final String[] record = record(row, rows);
                fields.clear();
                for (String column : columns) {
                    final int index = CONTRACT.indexOf(column);
                    fields.add(index >= 0 ? record[index] : "extra" + row);
                }
                writer.write(String.join(",", fields));
                writer.write('\n');
            }
        }
        return file;
    }

    static Path write(Path file, int rows) throws IOException {
        return write(file, CONTRACT, rows);
    }

    /** The line of {@code file} (1 is the header) at which record {@code row} stands. */
    static int lineOf(int row) {
        return row + 2;
    }

    /** Record {@code row} of {@code rows}, in {@link #CONTRACT} order. */
    static String[] record(int row, int rows) {
        final int fastRetransmit = rows / 3;
        final int timeout = 2 * rows / 3;
        final int episode = Math.max(1, rows / 20);
        final long cwndAtFastRetransmit = 10L * MSS + (long) fastRetransmit * MSS / 4;
        final long halved = Math.max(2L * MSS, cwndAtFastRetransmit / 2);
        final long cwndAtTimeout = halved + (long) (timeout - fastRetransmit) * MSS / 64;
        final String state;
        final long cwnd;
        final long ssthresh;
        if (row < fastRetransmit) {
            state = "open";
            cwnd = 10L * MSS + (long) row * MSS / 4;
            ssthresh = ConnectionTrace.INFINITE_SSTHRESH;
        } else if (row < timeout) {
            state = row < fastRetransmit + episode ? "recovery" : "open";
            cwnd = halved + (long) (row - fastRetransmit) * MSS / 64;
            ssthresh = halved;
        } else {
            state = row < timeout + episode ? "loss" : "open";
            ssthresh = Math.max(2L * MSS, cwndAtTimeout / 2);
            cwnd = Math.min(ssthresh, MSS + (long) (row - timeout) * MSS / 4);
        }
        final long inFlight = Math.max(0, cwnd - (long) (row % 3) * MSS);
        final long srttUs = 20_000 + (row % 50) * 10;
        final long sndUna = (0xFFFF_F000L + (long) row * MSS) & 0xFFFF_FFFFL;
        return new String[] {
            Long.toString(row * RECORD_INTERVAL_US),
            Long.toString(sndUna),
            Long.toString((sndUna + inFlight) & 0xFFFF_FFFFL),
            Long.toString(cwnd),
            Long.toString(ssthresh),
            Long.toString(inFlight),
            Long.toString(inFlight),
            Long.toString(srttUs),
            Long.toString(srttUs / 4),
            Long.toString(200_000),
            Long.toString(20_000),
            "0",
            state.equals("open") ? "0" : Long.toString(MSS),
            state.equals("open") ? "0" : "1",
            Long.toString((long) row * MSS),
            state,
            "0",
        };
    }
}
