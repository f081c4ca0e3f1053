package dev.tern.cli;

import dev.tern.cli.TernCommandLineTest.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static dev.tern.cli.TernCommandLineTest.tern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlotCommandTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    private static final double INFINITE_SSTHRESH_KIB = ConnectionTrace.INFINITE_SSTHRESH / 1024.0;

    @TempDir
    Path directory;

    @Test
    void plotsATraceToAPngThatImageIoReadsAtTheChartSize() throws Exception {
        final Path trace = SyntheticTrace.write(directory.resolve("trace.csv"), 3000);
        final Path png = directory.resolve("trace.png");
        final Run run = tern("plot", trace.toString(), "-o", png.toString());
        assertEquals(0, run.status(), run.err());
        assertEquals("", run.err());
        assertTrue(run.out().startsWith("plot: " + trace + ": 3000 records over 0.299900 s -> " + png), run.out());
        final byte[] bytes = Files.readAllBytes(png);
        assertArrayEquals(PNG_SIGNATURE, Arrays.copyOf(bytes, PNG_SIGNATURE.length));
        final BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, "ImageIO reads it");
        assertEquals(PlotCommand.WIDTH, image.getWidth());
        assertEquals(PlotCommand.HEIGHT, image.getHeight());
    }

    @Test
    void plotsATraceToWellFormedSvgWithPathData() throws Exception {
        final Path trace = SyntheticTrace.write(directory.resolve("trace.csv"), 3000);
        final Path svg = directory.resolve("trace.SVG");
        final Run run = tern("plot", trace.toString(), "-o", svg.toString(), "--title", "three thousand records");
        assertEquals(0, run.status(), run.err());
        final Document document = svg(svg);
        assertEquals("svg", document.getDocumentElement().getLocalName());
        assertEquals("http://www.w3.org/2000/svg", document.getDocumentElement().getNamespaceURI());
        final NodeList paths = document.getElementsByTagNameNS("*", "path");
        int drawn = 0;
        for (int i = 0; i < paths.getLength(); i++) {
            if (((Element) paths.item(i)).getAttribute("d").startsWith("M")) {
                drawn++;
            }
        }
        assertTrue(drawn > 0, "path elements with data: " + drawn);
    }

    @Test
    void columnsInAnotherOrderWithExtraColumnsStillPlot() throws Exception {
        final List<String> columns = new ArrayList<>(SyntheticTrace.CONTRACT);
        columns.add("ecn_ce");
        columns.add(0, "note");
        Collections.shuffle(columns, new Random(11));
        final Path trace = SyntheticTrace.write(directory.resolve("shuffled.csv"), columns, 2000);
        final Path png = directory.resolve("shuffled.png");
        final Run run = tern("plot", trace.toString(), "-o", png.toString());
        assertEquals(0, run.status(), run.err());
        assertNotNull(ImageIO.read(png.toFile()));
        final XYChart shuffled = PlotCommand.chart(ConnectionTrace.read(trace), "t");
        final XYChart plain = PlotCommand.chart(ConnectionTrace.read(SyntheticTrace.write(directory.resolve("plain.csv"), 2000)), "t");
        assertEquals(names(plain), names(shuffled));
        for (String name : names(plain)) {
            assertArrayEquals(plain.getSeries(name).getYData(), shuffled.getSeries(name).getYData(), name);
        }
    }

    @Test
    void eachEcnReductionIsAMarkerOnTheCwndLine() throws Exception {
        final StringBuilder csv = new StringBuilder("time_us,cwnd,in_flight,srtt_us,ecn_reductions\n");
        for (int i = 0; i < 100; i++) {
            // Reductions at records 20, 50 and 51 (two in a row are two markers).
            final int reductions = i < 20 ? 0 : i < 50 ? 1 : i < 51 ? 2 : 3;
            csv.append(i * 1000).append(',').append(14600 + i).append(",1000,200,").append(reductions).append('\n');
        }
        final Path trace = Files.writeString(directory.resolve("ecn.csv"), csv);
        final org.knowm.xchart.XYChart chart = PlotCommand.chart(ConnectionTrace.read(trace), "ecn");
        final org.knowm.xchart.XYSeries marks = chart.getSeries("ECN reduction");
        assertEquals(3, marks.getXData().length);
        assertEquals(0.02, marks.getXData()[0], 1e-9, "at the record's time, in seconds");
        assertEquals((14600 + 20) / 1024.0, marks.getYData()[0], 1e-9, "on the cwnd line, in KiB");
        final Path plain = SyntheticTrace.write(directory.resolve("plain.csv"), 100);
        assertEquals(null, PlotCommand.chart(ConnectionTrace.read(plain), "plain").getSeries("ECN reduction"));
    }

    @Test
    void aHeaderWithoutARequiredColumnFailsWithStatus1NamingTheColumn() throws Exception {
        final List<String> columns = new ArrayList<>(SyntheticTrace.CONTRACT);
        columns.remove("srtt_us");
        final Path trace = SyntheticTrace.write(directory.resolve("no-srtt.csv"), columns, 10);
        final Path png = directory.resolve("out.png");
        final Run run = failure(tern("plot", trace.toString(), "-o", png.toString()));
        assertTrue(run.err().startsWith("tern: plot: " + trace + " line 1: the header has no column srtt_us "), run.err());
        assertFalse(Files.exists(png), "nothing written");
    }

    @Test
    void aMalformedNumberFailsWithStatus1NamingItsLine() throws Exception {
        final Path trace = SyntheticTrace.write(directory.resolve("bad.csv"), 100);
        final List<String> lines = new ArrayList<>(Files.readAllLines(trace));
        final int line = SyntheticTrace.lineOf(57);
        lines.set(line - 1, lines.get(line - 1).replaceFirst("^(\\d+),", "$1x,"));
        Files.write(trace, lines);
        final Run run = failure(tern("plot", trace.toString(), "-o", directory.resolve("out.svg").toString()));
        assertEquals("tern: plot: " + trace + " line " + line + ": time_us is not a whole number: '5700x'", run.err().strip());
    }

    @Test
    void aMissingTraceFailsWithStatus1() {
        final Path missing = directory.resolve("absent.csv");
        final Run run = failure(tern("plot", missing.toString(), "-o", directory.resolve("out.png").toString()));
        assertEquals("tern: plot: cannot read " + missing + ": no such file or directory", run.err().strip());
    }

    @Test
    void anUnwritableOutputFailsWithStatus1() throws Exception {
        final Path trace = SyntheticTrace.write(directory.resolve("trace.csv"), 10);
        final Path output = directory.resolve("no-such-directory").resolve("out.png");
        final Run run = failure(tern("plot", trace.toString(), "-o", output.toString()));
        assertEquals("tern: plot: cannot write " + output + ": no such file or directory", run.err().strip());
    }

    @Test
    void anOutputThatIsNeitherSvgNorPngIsAUsageErrorBeforeTheTraceIsRead() {
        final Run run = tern("plot", directory.resolve("absent.csv").toString(), "-o", "trace.pdf");
        assertEquals(2, run.status());
        assertEquals("tern: plot: -o trace.pdf: the name must end in .svg or .png", run.err().strip());
    }

    @Test
    void ssthreshIsDrawnOnlyOnceItIsFinite() throws Exception {
        final XYChart chart = PlotCommand.chart(ConnectionTrace.read(SyntheticTrace.write(directory.resolve("t.csv"), 3000)), "t");
        final double[] ssthresh = chart.getSeries("ssthresh").getYData();
        assertTrue(Double.isNaN(ssthresh[0]), "not drawn before the first loss");
        assertTrue(Arrays.stream(ssthresh).filter(v -> !Double.isNaN(v)).count() > 100, "drawn after it");
        for (XYSeries series : chart.getSeriesCollection()) {
            if (series.getYAxisGroup() == 0) {
                final double max = Arrays.stream(series.getYData()).filter(v -> !Double.isNaN(v)).max().orElse(0);
                assertTrue(max < INFINITE_SSTHRESH_KIB / 100, series.getName() + " reaches " + max + " KiB");
            }
        }
    }

    @Test
    void aTraceThatNeverLostHasNoSsthreshLine() throws Exception {
        final Path whole = SyntheticTrace.write(directory.resolve("t.csv"), 3000);
        assertNotNull(PlotCommand.chart(ConnectionTrace.read(whole), "t").getSeries("ssthresh"));
        final Path early = directory.resolve("early.csv");
        Files.write(early, Files.readAllLines(whole).subList(0, SyntheticTrace.lineOf(899)));
        assertNull(PlotCommand.chart(ConnectionTrace.read(early), "t").getSeries("ssthresh"));
    }

    @Test
    void recoveryAndLossAreShadedAndSmoothedRttGoesOnTheRightAxisInMilliseconds() throws Exception {
        final XYChart chart = PlotCommand.chart(ConnectionTrace.read(SyntheticTrace.write(directory.resolve("t.csv"), 3000)), "t");
        assertEquals(List.of("recovery", "loss", "pipe", "in flight", "ssthresh", "cwnd", "smoothed RTT (right)"),
            names(chart));
        final XYSeries recovery = chart.getSeries("recovery");
        assertEquals(XYSeries.XYSeriesRenderStyle.StepArea, recovery.getXYSeriesRenderStyle().orElseThrow());
        final double[] band = recovery.getYData();
        assertEquals(3000, band.length, "3000 records need no thinning");
        for (int row = 0; row < band.length; row++) {
            assertEquals(row >= 1000 && row < 1150, !Double.isNaN(band[row]), "recovery band at record " + row);
        }
        final XYSeries srtt = chart.getSeries("smoothed RTT (right)");
        assertEquals(1, srtt.getYAxisGroup());
        assertEquals(20.0, srtt.getYData()[0]);
        final XYChart withoutState = PlotCommand.chart(ConnectionTrace.read(SyntheticTrace.write(directory.resolve("n.csv"),
            List.of("time_us", "cwnd", "in_flight", "srtt_us"), 3000)), "t");
        assertEquals(List.of("in flight", "cwnd", "smoothed RTT (right)"), names(withoutState));
    }

    @Test
    void aTraceOf200000RecordsPlotsWithAFewThousandPointsPerSeries() throws Exception {
        final Path trace = SyntheticTrace.write(directory.resolve("large.csv"), 200_000);
        final Path png = directory.resolve("large.png");
        final Run run = tern("plot", trace.toString(), "-o", png.toString());
        assertEquals(0, run.status(), run.err());
        assertTrue(run.out().contains(": 200000 records over 19.999900 s"), run.out());
        assertNotNull(ImageIO.read(png.toFile()));
        for (XYSeries series : PlotCommand.chart(ConnectionTrace.read(trace), "t").getSeriesCollection()) {
            assertTrue(series.getXData().length <= 2 * PlotCommand.BUCKETS, series.getName() + ": " + series.getXData().length);
        }
    }

    @Test
    void helpListsPlot() {
        final String list = TernCommandLineTest.tern("help").out();
        assertTrue(list.lines().anyMatch(l -> l.matches("\\s+plot\\s+draw a TCP connection trace.*")), list);
        assertTrue(TernCommandLineTest.tern("plot", "--help").out()
            .startsWith("usage: ./tern plot TRACE.csv -o OUT.svg|OUT.png [--title TEXT]"));
    }

    private static List<String> names(XYChart chart) {
        return chart.getSeriesCollection().stream().map(XYSeries::getName).toList();
    }

    /** {@code run} failed as a command that could not do its job: status 1, one line, no exception's name. */
    private static Run failure(Run run) {
        assertEquals(1, run.status(), run.out() + run.err());
        assertEquals(1, run.err().lines().count(), run.err());
        assertFalse(run.err().contains("Exception") || run.err().contains("\tat "), run.err());
        return run;
    }

    private static Document svg(Path file) throws Exception {
        final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        // The SVG names the W3C's DTD; a test must not fetch it.
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        return factory.newDocumentBuilder().parse(file.toFile());
    }
}
