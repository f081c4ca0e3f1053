package dev.tern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionTraceTest {
    @TempDir
    Path directory;

    @Test
    void readsTheColumnsItDrawsFromAContractTrace() throws Exception {
        final ConnectionTrace trace = ConnectionTrace.read(SyntheticTrace.write(directory.resolve("t.csv"), 300));
        assertEquals(300, trace.records());
        for (int row : new int[] {0, 1, 99, 100, 150, 200, 215, 299}) {
            final String[] record = SyntheticTrace.record(row, 300);
            assertEquals(Long.parseLong(record[0]), trace.timeUs()[row]);
            assertEquals(Long.parseLong(record[3]), trace.cwnd()[row]);
            assertEquals(Long.parseLong(record[4]), trace.ssthresh()[row]);
            assertEquals(Long.parseLong(record[5]), trace.inFlight()[row]);
            assertEquals(Long.parseLong(record[6]), trace.pipe()[row]);
            assertEquals(Long.parseLong(record[7]), trace.srttUs()[row]);
            assertEquals(record[15], trace.state(row).name().toLowerCase(Locale.ROOT));
        }
        assertEquals(ConnectionTrace.State.RECOVERY, trace.state(100));
        assertEquals(ConnectionTrace.State.LOSS, trace.state(200));
    }

    @Test
    void findsColumnsByNameInAnyOrderAndSkipsUnknownOnes() throws Exception {
        final ConnectionTrace plain = ConnectionTrace.read(SyntheticTrace.write(directory.resolve("plain.csv"), 500));
        final List<String> columns = new ArrayList<>(SyntheticTrace.CONTRACT);
        columns.add(4, "queue_delay_us");
        columns.add("comment");
        Collections.shuffle(columns, new Random(5));
        final ConnectionTrace shuffled = ConnectionTrace.read(SyntheticTrace.write(directory.resolve("s.csv"), columns, 500));
        assertArrayEquals(plain.timeUs(), shuffled.timeUs());
        assertArrayEquals(plain.cwnd(), shuffled.cwnd());
        assertArrayEquals(plain.inFlight(), shuffled.inFlight());
        assertArrayEquals(plain.srttUs(), shuffled.srttUs());
        assertArrayEquals(plain.pipe(), shuffled.pipe());
        assertArrayEquals(plain.ssthresh(), shuffled.ssthresh());
        for (int row = 0; row < 500; row++) {
            assertEquals(plain.state(row), shuffled.state(row));
        }
    }

    @Test
    void pipeSsthreshAndStateAreOptional() throws Exception {
        final ConnectionTrace trace = ConnectionTrace.read(SyntheticTrace.write(directory.resolve("t.csv"),
            List.of("time_us", "cwnd", "in_flight", "srtt_us"), 10));
        assertEquals(10, trace.records());
        assertNull(trace.pipe());
        assertNull(trace.ssthresh());
        assertFalse(trace.hasState());
    }

    @ParameterizedTest
    @ValueSource(strings = {"time_us", "cwnd", "in_flight", "srtt_us"})
    void aHeaderWithoutARequiredColumnIsRejectedNamingIt(String missing) throws Exception {
        final List<String> columns = new ArrayList<>(SyntheticTrace.CONTRACT);
        columns.remove(missing);
        final Path file = SyntheticTrace.write(directory.resolve("t.csv"), columns, 10);
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> ConnectionTrace.read(file));
        assertTrue(error.getMessage().startsWith(file + " line 1: the header has no column " + missing + " "),
            error.getMessage());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "cwnd=12x         | cwnd is not a whole number: '12x'",
        "srtt_us=         | srtt_us is not a whole number: ''",
        "in_flight=-5     | in_flight is not a whole number: '-5'",
        "pipe=1.5         | pipe is not a whole number: '1.5'",
        "ssthresh=99999999999999999999 | ssthresh is not a whole number: '99999999999999999999'",
        "state=slow_start | state 'slow_start' is not open, recovery or loss",
        "time_us=0        | time_us 0 is before the previous record's 3500",
        "fields=16        | 16 fields where the header has 17",
        "fields=18        | 18 fields where the header has 17",
    })
    void aMalformedRecordIsRejectedNamingItsLine(String change, String reason) throws Exception {
        final Path file = SyntheticTrace.write(directory.resolve("t.csv"), 100);
        final List<String> lines = new ArrayList<>(Files.readAllLines(file));
        final int line = SyntheticTrace.lineOf(36);
        final List<String> fields = new ArrayList<>(List.of(lines.get(line - 1).split(",", -1)));
        final String[] nameAndValue = change.strip().split("=", -1);
        switch (nameAndValue[0]) {
            case "fields" -> {
                while (fields.size() > Integer.parseInt(nameAndValue[1])) {
                    fields.removeLast();
                }
                while (fields.size() < Integer.parseInt(nameAndValue[1])) {
                    fields.add("0");
                }
            }
            default -> fields.set(SyntheticTrace.CONTRACT.indexOf(nameAndValue[0]), nameAndValue[1]);
        }
        lines.set(line - 1, String.join(",", fields));
        Files.write(file, lines);
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> ConnectionTrace.read(file));
        assertEquals(file + " line " + line + ": " + reason.strip(), error.getMessage());
    }

    @Test
    void anEmptyFileAndAHeaderAloneAreRejected() throws Exception {
        final Path empty = Files.createFile(directory.resolve("empty.csv"));
        assertEquals(empty + ": empty file; expected a header line naming the columns",
            assertThrows(TraceFormatException.class, () -> ConnectionTrace.read(empty)).getMessage());
        final Path header = SyntheticTrace.write(directory.resolve("header.csv"), 0);
        assertEquals(header + ": no records after the header",
            assertThrows(TraceFormatException.class, () -> ConnectionTrace.read(header)).getMessage());
    }

    @Test
    void carriageReturnsAndBlankLinesAreTolerated() throws Exception {
        final Path file = directory.resolve("crlf.csv");
        Files.writeString(file, "time_us,cwnd,in_flight,srtt_us\r\n0,14480,0,0\r\n\r\n100,15928,1448,20000\r\n\n",
            StandardCharsets.US_ASCII);
        final ConnectionTrace trace = ConnectionTrace.read(file);
        assertArrayEquals(new long[] {0, 100}, trace.timeUs());
        assertArrayEquals(new long[] {0, 20000}, trace.srttUs());
    }

    @Test
    void aBinaryFileIsRejectedAsAHeaderWithoutTheColumns() throws IOException {
        final Path file = directory.resolve("binary.csv");
        final byte[] bytes = new byte[4096];
        new Random(1).nextBytes(bytes);
        Files.write(file, bytes);
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> ConnectionTrace.read(file));
        assertTrue(error.getMessage().startsWith(file + " line 1: the header has no column "), error.getMessage());
    }

    @Test
    void controlCharactersInABadValueArePrintedAsQuestionMarks() throws IOException {
        final Path file = directory.resolve("t.csv");
        Files.writeString(file, "time_us,cwnd,in_flight,srtt_us\n0,14\u0007\u001b[2J,0,0\n", StandardCharsets.ISO_8859_1);
        assertEquals(file + " line 2: cwnd is not a whole number: '14??[2J'",
            assertThrows(TraceFormatException.class, () -> ConnectionTrace.read(file)).getMessage());
    }
}
