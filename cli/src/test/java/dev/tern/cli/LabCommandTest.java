package dev.tern.cli;

import dev.tern.lab.Dumbbell;
import dev.tern.lab.ScenarioFile;
import dev.tern.lab.ScenarioResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static dev.tern.cli.TernCommandLineTest.tern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LabCommandTest {
    private static final String SMALL = "duration = 1s\nrate = 5mbit\ndelay = 5ms\nqueue = 30p\n[flow]\ncc = cubic\n";

    @Test
    void aScenarioFilePrintsItsFingerprintTheSameTwice(@TempDir Path dir) throws Exception {
        final Path file = dir.resolve("small.lab");
        Files.writeString(file, SMALL);
        final TernCommandLineTest.Run first = tern("lab", file.toString());
        assertEquals(0, first.status(), first.err());
        final String fingerprint = first.out().lines().filter(l -> l.startsWith("fingerprint small ")).findFirst()
            .orElseThrow(() -> new AssertionError(first.out()));
        assertTrue(fingerprint.matches("fingerprint small [0-9a-f]{16}"), fingerprint);
        assertTrue(tern("lab", file.toString()).out().contains(fingerprint), "same scenario, same fingerprint");
        final TernCommandLineTest.Run csv = tern("lab", "--csv", file.toString());
        assertEquals(2, csv.out().lines().count(), csv.out());
        assertTrue(csv.out().lines().skip(1).findFirst().orElseThrow().startsWith("small,1,0,cubic,"), csv.out());
        assertTrue(tern("lab", "--json", file.toString()).out().contains("\"scenario\": \"small\""));
        Files.writeString(file, SMALL + "[udp]\nrate = 1mbit\n");
        final String json = tern("lab", "--json", file.toString()).out();
        assertTrue(json.contains("\"udp\": {\"sent_frames\": "), json);
        final String row = tern("lab", "--csv", file.toString()).out().lines().skip(1).findFirst().orElseThrow();
        final String[] columns = row.split(",");
        // UDP offered and delivered come just before the fingerprint: about 1 Mbit/s offered, part of it lost in
        // the queue CUBIC fills.
        final double offered = Double.parseDouble(columns[columns.length - 3]);
        final double delivered = Double.parseDouble(columns[columns.length - 2]);
        assertEquals(1e6, offered, 0.02e6, row);
        assertTrue(delivered > 0.3e6 && delivered <= offered, row);
    }

    @Test
    void aBadScenarioIsOneLineFileLineReasonAndStatus2WithNothingRun(@TempDir Path dir) throws Exception {
        final Path good = dir.resolve("good.lab");
        Files.writeString(good, SMALL);
        final Path bad = dir.resolve("bad.lab");
        Files.writeString(bad, "rate = 5mbit\nqueue = 10b\n[flow]\ncc = cubic\n");
        final TernCommandLineTest.Run run = tern("lab", good.toString(), bad.toString());
        assertEquals(2, run.status(), run.err());
        assertEquals("tern: " + bad + ":2: queue 10b is smaller than one frame (1514 bytes)", run.err().strip());
        assertEquals("", run.out(), "nothing ran");
        assertEquals(2, tern("lab", "--frob").status());
        assertEquals(2, tern("lab", "--csv", "--json").status());
    }

    @Test
    void pcapWritesOneFilePerFlowIntoAnExistingDirectory(@TempDir Path dir) throws Exception {
        final Path file = dir.resolve("small.lab");
        final Path out = runSmallInto(dir, "--pcap");
        assertTrue(Files.size(out.resolve("small-flow0.pcap")) > 10_000, "frames written");
        final TernCommandLineTest.Run missing = tern("lab", "--pcap", dir.resolve("nowhere").toString(), file.toString());
        assertEquals(2, missing.status());
        assertTrue(missing.err().contains("not a directory"), missing.err());
    }

    @Test
    void plotWritesAChartAndItsNumbersForEachScenario(@TempDir Path dir) throws Exception {
        final Path out = runSmallInto(dir, "--plot");
        assertTrue(Files.readString(out.resolve("small.svg")).contains("<svg"), "an SVG image");
        final ScenarioResult result = Dumbbell.run(ScenarioFile.parse("small.lab", null, SMALL.lines().toList()), null);
        final org.knowm.xchart.XYChart chart = LabPlot.chart(result);
        assertEquals(result.series().points(), chart.getSeries("flow 0 cubic").getYData().length);
        assertEquals(1, chart.getSeries("queue delay (right)").getYAxisGroup());
        final List<String> csv = Files.readAllLines(out.resolve("small.csv"));
        assertEquals("time_s,queue_delay_ms,flow0_bps", csv.getFirst());
        // One second in points of 100 ms; the flow carries most of the 5 Mbit/s link once it has started.
        assertTrue(csv.size() >= 9 && csv.size() <= 11, csv.toString());
        final String[] late = csv.get(csv.size() - 1).split(",");
        assertTrue(Double.parseDouble(late[2]) > 3e6, csv.toString());
    }

    /** Runs the small scenario with {@code flag} naming a fresh directory under {@code dir}, and returns it. */
    private static Path runSmallInto(Path dir, String flag) throws Exception {
        final Path file = dir.resolve("small.lab");
        Files.writeString(file, SMALL);
        final Path out = Files.createDirectory(dir.resolve(flag.substring(2)));
        final TernCommandLineTest.Run run = tern("lab", flag, out.toString(), file.toString());
        assertEquals(0, run.status(), run.err());
        return out;
    }
}
