package dev.tern.cli;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.VectorGraphicsEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * {@code tern plot TRACE.csv -o OUT.svg|OUT.png [--title TEXT]}: draws a TCP connection trace (see
 * {@link ConnectionTrace}) against time in seconds: congestion window, bytes in flight, pipe and ssthresh in KiB on
 * the left axis, smoothed RTT in milliseconds on the right, and shaded stretches where the sender is in recovery or
 * loss. Each series is thinned to at most {@code 2 * BUCKETS} points by {@link MinMaxDecimation}, so a trace of a
 * million records draws in seconds and its spikes stay visible.
 */
final class PlotCommand {
    static final String USAGE = "plot TRACE.csv -o OUT.svg|OUT.png [--title TEXT]";
    static final CommandHelp HELP = new CommandHelp("plot", "TRACE.csv -o OUT.svg|OUT.png [--title TEXT]",
        "draw a TCP connection trace (CSV) as a chart",
        "Draws the CSV trace of one TCP connection (nc or serve --tcp-trace) against time: congestion window, bytes "
            + "in flight, pipe and ssthresh in KiB on the left axis, smoothed RTT in ms on the right, recovery and "
            + "loss shaded.",
        java.util.List.of(
            CommandHelp.option("-o OUT.svg|OUT.png", "the chart to write; the name's ending chooses the format",
                "required"),
            CommandHelp.option("--title TEXT", "the chart's title", "TCP trace TRACE.csv")),
        false, java.util.List.of("./tern nc --tcp-trace nc.csv 198.18.0.1 9 < file && ./tern plot nc.csv -o nc.svg"));

    /** Buckets across the time axis; about twice the plot's width in pixels. */
    static final int BUCKETS = 2000;
    static final int WIDTH = 1280;
    static final int HEIGHT = 720;

    private static final double KIB = 1024;
    private static final Color CWND = new Color(0x1f77b4);
    private static final Color IN_FLIGHT = new Color(0x2ca02c);
    private static final Color PIPE = new Color(0x17becf);
    private static final Color SSTHRESH = new Color(0x7f7f7f);
    private static final Color SRTT = new Color(0x9467bd);
    private static final Color ECN = new Color(0xd62728);
    private static final Color RECOVERY = new Color(255, 187, 120, 110);
    private static final Color LOSS = new Color(214, 39, 40, 80);

    enum Format { SVG, PNG }

    private final PrintStream out;

    PlotCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) {
        final Arguments args = Arguments.parse("plot", argv, Set.of("-o", "--title"), Set.of());
        final Path trace = path(args.operands(1, 1, USAGE).getFirst());
        if (!args.has("-o")) {
            throw new UsageException("plot: missing -o OUT.svg|OUT.png; usage: tern " + USAGE);
        }
        final Path output = path(args.value("-o", null));
        final Format format = format(output);
        final String title = args.value("--title", "TCP trace " + trace.getFileName());

        final ConnectionTrace connection;
        try {
            connection = ConnectionTrace.read(trace);
        } catch (TraceFormatException e) {
            throw new CommandFailure("plot: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new CommandFailure("plot: cannot read " + trace + ": " + reason(e), e);
        }
        // Charts are drawn into images, never onto a screen; without this AWT may look for a display.
        System.setProperty("java.awt.headless", "true");
        final byte[] image = draw(chart(connection, title), format);
        try {
            Files.write(output, image);
        } catch (IOException e) {
            throw new CommandFailure("plot: cannot write " + output + ": " + reason(e), e);
        }
        final long[] timeUs = connection.timeUs();
        out.printf(Locale.ROOT, "plot: %s: %d record%s over %.6f s -> %s%n", trace, connection.records(),
            connection.records() == 1 ? "" : "s", timeUs[timeUs.length - 1] / 1e6, output);
        return 0;
    }

    private static Path path(String name) {
        try {
            return Path.of(name);
        } catch (InvalidPathException e) {
            throw new UsageException("plot: bad file name '" + name + "': " + e.getReason());
        }
    }

    private static Format format(Path output) {
        final String name = output.getFileName() == null ? "" : output.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".svg")) {
            return Format.SVG;
        }
        if (name.endsWith(".png")) {
            return Format.PNG;
        }
        throw new UsageException("plot: -o " + output + ": the name must end in .svg or .png");
    }

    /** The encoded image, drawn in memory so that a failed drawing leaves no half-written file. */
    static byte[] draw(XYChart chart, Format format) {
        final ByteArrayOutputStream image = new ByteArrayOutputStream(256 * 1024);
        try {
            switch (format) {
                case SVG -> VectorGraphicsEncoder.saveVectorGraphic(chart, image,
                    VectorGraphicsEncoder.VectorGraphicsFormat.SVG);
                case PNG -> BitmapEncoder.saveBitmap(chart, image, BitmapEncoder.BitmapFormat.PNG);
            }
        } catch (IOException | RuntimeException | LinkageError | InternalError e) {
            // Headless AWT fails here, not earlier, on a machine without fontconfig or without any font.
            throw new CommandFailure("plot: could not draw the chart: " + e.getMessage()
                + " (Java draws text through fontconfig and needs at least one font installed)", e);
        }
        return image.toByteArray();
    }

    /** The chart of {@code trace}, each series thinned to at most {@code 2 * BUCKETS} points. */
    static XYChart chart(ConnectionTrace trace, String title) {
        final XYChart chart = twoAxisChart(title, "time (s)", "KiB", "smoothed RTT (ms)");
        // Lines and bands draw no markers (SeriesMarkers.NONE); the size is for the ECN reductions' scatter.
        chart.getStyler().setMarkerSize(7);
        chart.getStyler().setXAxisDecimalPattern("0.######");
        chart.getStyler().setYAxisDecimalPattern("#,##0.###");

        final double[] seconds = scaled(trace.timeUs(), 1e6);
        final double[] cwnd = scaled(trace.cwnd(), KIB);
        final double[] inFlight = scaled(trace.inFlight(), KIB);
        final double[] pipe = trace.pipe() == null ? null : scaled(trace.pipe(), KIB);
        final double[] ssthresh = trace.ssthresh() == null ? null : ssthreshKib(trace.ssthresh());
        double top = 0;
        for (double[] values : new double[][] {cwnd, inFlight, pipe, ssthresh}) {
            final double max = values == null ? Double.NaN : max(values);
            if (max > top) {
                top = max;
            }
        }

        // Shading first: XChart draws series in the order they were added, and the lines belong on top.
        if (trace.hasState()) {
            shade(chart, "recovery", trace, ConnectionTrace.State.RECOVERY, seconds, top, RECOVERY);
            shade(chart, "loss", trace, ConnectionTrace.State.LOSS, seconds, top, LOSS);
        }
        // In this order so that cwnd, the line a reader looks for first, lies on top where the lines coincide.
        if (pipe != null) {
            line(chart, "pipe", seconds, pipe, PIPE, 0);
        }
        line(chart, "in flight", seconds, inFlight, IN_FLIGHT, 0);
        if (ssthresh != null && !Double.isNaN(max(ssthresh))) {
            line(chart, "ssthresh", seconds, ssthresh, SSTHRESH, 0);
        }
        line(chart, "cwnd", seconds, cwnd, CWND, 0);
        line(chart, "smoothed RTT (right)", seconds, scaled(trace.srttUs(), 1000), SRTT, 1);
        if (trace.ecnReductions() != null) {
            ecnMarks(chart, seconds, cwnd, trace.ecnReductions());
        }
        return chart;
    }

    /** A chart with a time axis, a left axis and a right one (group 1), both from 0, and the legend below. */
    static XYChart twoAxisChart(String title, String xTitle, String leftTitle, String rightTitle) {
        final XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
            .yAxisTitle(leftTitle).build();
        final XYStyler styler = chart.getStyler();
        styler.setLocale(Locale.ROOT);
        styler.setLegendPosition(Styler.LegendPosition.OutsideS);
        styler.setLegendLayout(Styler.LegendLayout.Horizontal);
        styler.setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        styler.setYAxisMin(0, 0.0);
        styler.setYAxisMin(1, 0.0);
        chart.setYAxisGroupTitle(1, rightTitle);
        return chart;
    }

    /**
     * A marker on the cwnd line at each record where an ECE reduced the window (RFC 3168 §6.1.2); nothing when none
     * did. Markers are not thinned: at most one per reduction, and reductions come at most once per round trip.
     */
    private static void ecnMarks(XYChart chart, double[] seconds, double[] cwnd, long[] reductions) {
        int count = 0;
        for (int i = 1; i < reductions.length; i++) {
            if (reductions[i] > reductions[i - 1]) {
                count++;
            }
        }
        if (count == 0) {
            return;
        }
        final double[] x = new double[count];
        final double[] y = new double[count];
        for (int i = 1, n = 0; i < reductions.length; i++) {
            if (reductions[i] > reductions[i - 1]) {
                x[n] = seconds[i];
                y[n++] = cwnd[i];
            }
        }
        final XYSeries series = chart.addSeries("ECN reduction", x, y);
        series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        series.setMarker(SeriesMarkers.DIAMOND);
        series.setMarkerColor(ECN);
    }

    static void line(XYChart chart, String name, double[] seconds, double[] values, Color color, int axis) {
        final MinMaxDecimation.Points points = MinMaxDecimation.reduce(seconds, values, BUCKETS);
        final XYSeries series = chart.addSeries(name, points.x(), points.y());
        series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        series.setMarker(SeriesMarkers.NONE);
        series.setLineColor(color);
        series.setLineWidth(1.5f);
        series.setYAxisGroup(axis);
    }

    /** A filled band from 0 to {@code top} wherever the trace is in {@code state}; nothing when it never is. */
    private static void shade(XYChart chart, String name, ConnectionTrace trace, ConnectionTrace.State state,
                              double[] seconds, double top, Color color) {
        final double[] band = new double[trace.records()];
        boolean any = false;
        for (int i = 0; i < band.length; i++) {
            final boolean in = trace.state(i) == state;
            band[i] = in ? top : Double.NaN;
            any |= in;
        }
        if (!any || top <= 0) {
            return;
        }
        final MinMaxDecimation.Points points = MinMaxDecimation.reduce(seconds, band, BUCKETS);
        final XYSeries series = chart.addSeries(name, points.x(), points.y());
        series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.StepArea);
        series.setMarker(SeriesMarkers.NONE);
        series.setFillColor(color);
        // The line is what the legend shows for this series, so it is the band's colour made opaque.
        series.setLineColor(new Color(color.getRed(), color.getGreen(), color.getBlue()));
        series.setLineWidth(2f);
    }

    /** ssthresh in KiB, NaN (not drawn) while it is still the writer's "infinite". */
    private static double[] ssthreshKib(long[] ssthresh) {
        final double[] kib = new double[ssthresh.length];
        for (int i = 0; i < kib.length; i++) {
            kib[i] = ssthresh[i] >= ConnectionTrace.INFINITE_SSTHRESH ? Double.NaN : ssthresh[i] / KIB;
        }
        return kib;
    }

    private static double[] scaled(long[] values, double divisor) {
        final double[] scaled = new double[values.length];
        for (int i = 0; i < scaled.length; i++) {
            scaled[i] = values[i] / divisor;
        }
        return scaled;
    }

    /** The largest value that is not NaN; NaN when every value is. */
    private static double max(double[] values) {
        double max = Double.NaN;
        for (double value : values) {
            if (Double.isNaN(max) || value > max) {
                max = value;
            }
        }
        return max;
    }

    /** An I/O failure in words, without the exception's class name. */
    private static String reason(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage() == null ? "I/O error" : e.getMessage();
    }
}
