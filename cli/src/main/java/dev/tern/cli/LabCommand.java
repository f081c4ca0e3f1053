package dev.tern.cli;

import dev.tern.lab.Dumbbell;
import dev.tern.lab.LabMatrix;
import dev.tern.lab.LabReport;
import dev.tern.lab.ScenarioFile;
import dev.tern.lab.ScenarioResult;
import dev.tern.lab.ScenarioSpec;
import dev.tern.lab.link.LabInputException;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code tern lab}: the congestion-control lab on virtual time (docs/LAB.md). */
final class LabCommand {
    static final String USAGE = "lab [--csv | --json] [--pcap DIR] [--plot DIR] [FILE.lab...]";
    static final CommandHelp HELP = new CommandHelp("lab", "[--csv | --json] [--pcap DIR] [--plot DIR] [FILE.lab...]",
        "run congestion-control scenarios through a simulated bottleneck",
        "Runs each scenario file (or, with none, the shipped matrix: coexistence, random loss, shallow buffer, "
            + "bufferbloat, ECN with CoDel, FQ-CoDel, PIE, DualPI2 and DCTCP's step marking, DCTCP in DualPI2's L4S "
            + "queue against CUBIC, many flows, RTT fairness, a cellular trace) "
            + "on a dumbbell of real Tern stacks through one bottleneck link on virtual time, and prints per flow "
            + "goodput, share, retransmits, CE marks and RTT quantiles, per scenario utilisation, Jain's index, queue "
            + "delay quantiles, drops and marks by cause, and a fingerprint line that is the same for the same "
            + "scenario and seed. A bad scenario file is one line FILE:LINE: reason and exit 2, with nothing run. "
            + "docs/LAB.md gives the file format.",
        List.of(
            CommandHelp.option("--csv", "one CSV row per flow instead of the text report", "off"),
            CommandHelp.option("--json", "one JSON array of scenarios instead of the text report", "off"),
            CommandHelp.option("--pcap DIR", "write each flow's frames at the router to DIR/NAME-flowN.pcap: data as "
                + "it leaves the bottleneck, ACKs as they go back to the sender, in virtual time from 0", "off"),
            CommandHelp.option("--plot DIR", "write DIR/NAME.svg (each flow's goodput and the mean queue delay over "
                + "simulated time, every 100 ms) and DIR/NAME.csv (the same numbers) for each scenario", "off")),
        false, List.of("./tern lab", "./tern lab --csv my-scenario.lab"));

    private final PrintStream out;
    private final PrintStream err;

    LabCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    int run(String[] argv) {
        final Arguments args = Arguments.parse("lab", argv, Set.of("--pcap", "--plot"), Set.of("--csv", "--json"));
        final List<String> files = args.operands(0, Integer.MAX_VALUE, USAGE);
        final boolean csv = args.has("--csv");
        final boolean json = args.has("--json");
        if (csv && json) {
            throw new UsageException("lab: --csv and --json exclude each other");
        }
        final Path pcap = directory(args, "--pcap");
        final Path plot = directory(args, "--plot");
        final List<ScenarioSpec> specs = new ArrayList<>();
        try {
            if (files.isEmpty()) {
                specs.addAll(LabMatrix.shipped());
            }
            for (String file : files) {
                specs.add(ScenarioFile.read(Path.of(file)));
            }
        } catch (LabInputException e) {
            throw new UsageException(e.getMessage());
        }
        if (csv) {
            out.println(LabReport.CSV_HEADER);
        }
        final List<ScenarioResult> results = new ArrayList<>();
        // On a terminal, a line per scenario says how far a matrix has come; logs and pipes do not get it.
        final boolean counting = specs.size() > 1 && System.console() != null && System.console().isTerminal();
        for (ScenarioSpec spec : specs) {
            if (counting) {
                err.printf("tern: lab: scenario %d of %d: %s%n", results.size() + 1, specs.size(), spec.name());
            }
            final ScenarioResult result = Dumbbell.run(spec, line -> err.println("tern: lab: " + line), pcap);
            results.add(result);
            if (csv) {
                out.print(LabReport.csv(result));
            } else if (!json) {
                out.print(LabReport.text(spec, result));
            }
            if (plot != null) {
                err.println("tern: lab: wrote " + LabPlot.write(plot, result));
            }
            out.flush();
        }
        if (json) {
            out.print(LabReport.json(results));
        }
        return 0;
    }

    /** The existing directory a flag names, or null when the flag is absent. */
    private static Path directory(Arguments args, String flag) {
        final String text = args.value(flag, null);
        if (text == null) {
            return null;
        }
        final Path path = Path.of(text);
        if (!Files.isDirectory(path)) {
            throw new UsageException("lab: " + flag + " " + path + ": not a directory");
        }
        return path;
    }
}
