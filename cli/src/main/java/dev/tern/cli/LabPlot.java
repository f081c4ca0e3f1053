package dev.tern.cli;

import dev.tern.lab.LabSeries;
import dev.tern.lab.ScenarioResult;
import org.knowm.xchart.XYChart;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code tern lab --plot DIR}: for each scenario, {@code NAME.svg}, each flow's goodput (Mbit/s, left axis) and the
 * bottleneck's mean queue delay (ms, right axis) over simulated time, one point per {@link LabSeries#INTERVAL_NS},
 * and {@code NAME.csv}, the same series as numbers. Cold path.
 */
final class LabPlot {
    private static final Color[] FLOW_COLOURS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f), new Color(0xbcbd22),
        new Color(0x17becf)};
    private static final Color QUEUE = new Color(0xd62728);
    /** Beyond this many flows only the queue and the first flows are drawn; the CSV holds them all. */
    private static final int MAX_DRAWN_FLOWS = 12;

    private LabPlot() {
    }

    /** Writes both files of {@code result} into {@code directory}; the paths written, for the command's report. */
    static String write(Path directory, ScenarioResult result) {
        final String base = result.name().replaceAll("[^A-Za-z0-9._-]", "_");
        final Path svg = directory.resolve(base + ".svg");
        final Path csv = directory.resolve(base + ".csv");
        // Charts are drawn into images, never onto a screen; without this AWT may look for a display.
        System.setProperty("java.awt.headless", "true");
        final byte[] image = PlotCommand.draw(chart(result), PlotCommand.Format.SVG);
        try {
            Files.write(svg, image);
            Files.writeString(csv, result.series().csv());
        } catch (IOException e) {
            throw new CommandFailure("lab: cannot write " + svg + ": " + e.getMessage(), e);
        }
        return svg + ", " + csv;
    }

    static XYChart chart(ScenarioResult result) {
        final LabSeries series = result.series();
        final XYChart chart = PlotCommand.twoAxisChart("lab: " + result.name(), "simulated time (s)",
            "goodput (Mbit/s)", "mean queue delay (ms)");
        chart.getStyler().setXAxisDecimalPattern("0.#");
        chart.getStyler().setYAxisDecimalPattern("#,##0.##");
        final double[] seconds = series.points() == 0 ? new double[] {0} : series.seconds();
        for (int f = 0; f < Math.min(series.flows(), MAX_DRAWN_FLOWS); f++) {
            final double[] mbps = series.points() == 0 ? new double[] {0} : series.goodputBps(f);
            for (int i = 0; i < mbps.length; i++) {
                mbps[i] /= 1e6;
            }
            PlotCommand.line(chart, "flow " + f + " " + result.flows().get(f).congestionControl(), seconds, mbps,
                FLOW_COLOURS[f % FLOW_COLOURS.length], 0);
        }
        PlotCommand.line(chart, "queue delay (right)", seconds, series.points() == 0 ? new double[] {0} : series.queueDelayMs(),
            QUEUE, 1);
        return chart;
    }
}
