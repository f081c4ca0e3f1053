package dev.tern.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One TCP connection's trace, read from the CSV that Tern's TCP writes: a header line naming the columns, then one
 * record per line. Columns are found by name, so their order may change and columns this class does not know are
 * skipped. Only the columns {@code tern plot} draws are read and kept:
 * <pre>
 *   time_us    microseconds since the connection's first record; never decreases        required
 *   cwnd       congestion window, bytes                                                 required
 *   in_flight  bytes sent and not yet acknowledged                                      required
 *   srtt_us    smoothed round-trip time, microseconds                                   required
 *   pipe       the sender's estimate of bytes in the network (RFC 6675 pipe), bytes     optional
 *   ssthresh   slow-start threshold, bytes; {@link #INFINITE_SSTHRESH} until a loss     optional
 *   state      open, recovery or loss                                                   optional
 *   ecn_reductions  window reductions ECEs caused so far (RFC 3168)                     optional
 * </pre>
 * The contract's other columns (snd_una, snd_nxt, rttvar_us, rto_us, min_rtt_us, sacked, lost, retrans, delivered,
 * pacing_bps) are neither checked nor kept. A whole trace lives on the heap: eight bytes per kept value, about 56 MB
 * for a million records.
 */
final class ConnectionTrace {
    /** What the writer prints for ssthresh before the first loss: "infinite", 2^30 bytes. */
    static final long INFINITE_SSTHRESH = 1L << 30;

    /** The sender's loss-recovery state in a record. */
    enum State { OPEN, RECOVERY, LOSS }

    private static final String[] COLUMNS = {"time_us", "cwnd", "in_flight", "srtt_us", "pipe", "ssthresh", "state",
        "ecn_reductions"};
    private static final int TIME = 0;
    private static final int CWND = 1;
    private static final int IN_FLIGHT = 2;
    private static final int SRTT = 3;
    private static final int PIPE = 4;
    private static final int SSTHRESH = 5;
    private static final int STATE = 6;
    private static final int ECN_REDUCTIONS = 7;
    private static final int REQUIRED = 4;
    private static final State[] STATES = State.values();
    private static final String REQUIRED_NAMES = String.join(", ", Arrays.asList(COLUMNS).subList(0, REQUIRED));

    private final long[][] columns;

    private ConnectionTrace(long[][] columns) {
        this.columns = columns;
    }

    /** Reads {@code file}; a file that breaks the contract is a {@link TraceFormatException} naming the line. */
    static ConnectionTrace read(Path file) throws IOException, TraceFormatException {
        final String name = file.toString();
        // ISO-8859-1 decodes any byte, so a binary file fails as a bad header or a bad number, not as a decoder error.
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
            final String header = reader.readLine();
            if (header == null) {
                throw new TraceFormatException(name, "empty file; expected a header line naming the columns");
            }
            final int fields = header.split(",", -1).length;
            final int[] columnOfField = columnOfField(name, header);
            final Column[] kept = new Column[COLUMNS.length];
            for (int field = 0; field < fields; field++) {
                if (columnOfField[field] >= 0) {
                    kept[columnOfField[field]] = new Column();
                }
            }
            final long[] values = new long[COLUMNS.length];
            long line = 1;
            long previousTimeUs = 0;
            for (String row = reader.readLine(); row != null; row = reader.readLine()) {
                line++;
                if (row.isEmpty()) {
                    continue;
                }
                parseRow(name, line, row, fields, columnOfField, values);
                if (kept[TIME].size > 0 && values[TIME] < previousTimeUs) {
                    throw new TraceFormatException(name, line, "time_us " + values[TIME]
                        + " is before the previous record's " + previousTimeUs);
                }
                previousTimeUs = values[TIME];
                for (int column = 0; column < kept.length; column++) {
                    if (kept[column] != null) {
                        kept[column].add(values[column]);
                    }
                }
            }
            if (kept[TIME].size == 0) {
                throw new TraceFormatException(name, "no records after the header");
            }
            final long[][] columns = new long[COLUMNS.length][];
            for (int column = 0; column < kept.length; column++) {
                columns[column] = kept[column] == null ? null : kept[column].values();
            }
            return new ConnectionTrace(columns);
        }
    }

    /** For each field of the header, the index into {@link #COLUMNS} it fills, or -1 to skip it. */
    private static int[] columnOfField(String name, String header) throws TraceFormatException {
        final String[] fieldNames = header.split(",", -1);
        final Map<String, Integer> fieldOfName = new HashMap<>();
        for (int field = 0; field < fieldNames.length; field++) {
            final String fieldName = fieldNames[field].strip();
            if (fieldOfName.putIfAbsent(fieldName, field) != null && Arrays.asList(COLUMNS).contains(fieldName)) {
                throw new TraceFormatException(name, 1, "column " + printable(fieldName) + " appears twice in the header");
            }
        }
        final int[] columnOfField = new int[fieldNames.length];
        Arrays.fill(columnOfField, -1);
        for (int column = 0; column < COLUMNS.length; column++) {
            final Integer field = fieldOfName.get(COLUMNS[column]);
            if (field != null) {
                columnOfField[field] = column;
            } else if (column < REQUIRED) {
                throw new TraceFormatException(name, 1, "the header has no column " + COLUMNS[column]
                    + " (a trace needs " + REQUIRED_NAMES + ")");
            }
        }
        return columnOfField;
    }

    /** Fills {@code values}, indexed like {@link #COLUMNS}, from the kept fields of {@code row}. */
    private static void parseRow(String name, long line, String row, int fields, int[] columnOfField, long[] values)
        throws TraceFormatException {
        int field = 0;
        int start = 0;
        while (true) {
            int end = row.indexOf(',', start);
            if (end < 0) {
                end = row.length();
            }
            if (field < fields && columnOfField[field] >= 0) {
                final int column = columnOfField[field];
                values[column] = column == STATE ? state(name, line, row, start, end) : wholeNumber(name, line, row, start, end, column);
            }
            field++;
            if (end == row.length()) {
                break;
            }
            start = end + 1;
        }
        if (field != fields) {
            throw new TraceFormatException(name, line, field + " fields where the header has " + fields);
        }
    }

    private static long wholeNumber(String name, long line, String row, int start, int end, int column)
        throws TraceFormatException {
        long value = 0;
        for (int i = start; i < end; i++) {
            final int digit = row.charAt(i) - '0';
            if (digit < 0 || digit > 9 || value > (Long.MAX_VALUE - digit) / 10) {
                value = -1;
                break;
            }
            value = value * 10 + digit;
        }
        if (value < 0 || start == end) {
            throw new TraceFormatException(name, line, COLUMNS[column] + " is not a whole number: '"
                + printable(row.substring(start, end)) + "'");
        }
        return value;
    }

    private static long state(String name, long line, String row, int start, int end) throws TraceFormatException {
        for (State state : STATES) {
            final String word = state.name().toLowerCase(Locale.ROOT);
            if (end - start == word.length() && row.startsWith(word, start)) {
                return state.ordinal();
            }
        }
        throw new TraceFormatException(name, line, "state '" + printable(row.substring(start, end))
            + "' is not open, recovery or loss");
    }

    /** {@code text} fit for one line of an error message: control bytes replaced, at most 40 characters. */
    private static String printable(String text) {
        final String shown = text.length() > 40 ? text.substring(0, 40) + "..." : text;
        return shown.codePoints().map(c -> c < 0x20 || c == 0x7f ? '?' : c)
            .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
    }

    int records() {
        return columns[TIME].length;
    }

    /** Microseconds since the connection's first record, one per record, never decreasing. */
    long[] timeUs() {
        return columns[TIME];
    }

    long[] cwnd() {
        return columns[CWND];
    }

    long[] inFlight() {
        return columns[IN_FLIGHT];
    }

    long[] srttUs() {
        return columns[SRTT];
    }

    /** Null when the trace has no pipe column. */
    long[] pipe() {
        return columns[PIPE];
    }

    /** Null when the trace has no ssthresh column; {@link #INFINITE_SSTHRESH} before the first loss. */
    long[] ssthresh() {
        return columns[SSTHRESH];
    }

    /** The ECE reductions so far, one per record; null when the trace has no such column. */
    long[] ecnReductions() {
        return columns[ECN_REDUCTIONS];
    }

    boolean hasState() {
        return columns[STATE] != null;
    }

    /** The state of record {@code index}; only when {@link #hasState()}. */
    State state(int index) {
        return STATES[(int) columns[STATE][index]];
    }

    /** A growing column of longs. */
    private static final class Column {
        private long[] values = new long[1024];
        private int size;

        void add(long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, values.length * 2);
            }
            values[size++] = value;
        }

        long[] values() {
            return Arrays.copyOf(values, size);
        }
    }
}
