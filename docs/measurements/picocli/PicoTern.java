// Not built with the project: a picocli model of tern's commands, compiled and timed by measure.sh (docs/COMMANDS.md).
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.util.List;
import java.util.concurrent.Callable;

/** A picocli model of tern's commands and flags, to measure what picocli costs a short run. */
@Command(name = "tern", mixinStandardHelpOptions = true, subcommands = {CommandLine.HelpCommand.class,
    PicoTern.Demo.class, PicoTern.Ping.class, PicoTern.Nc.class, PicoTern.Serve.class, PicoTern.Stat.class,
    PicoTern.Devices.class, PicoTern.Bench.class, PicoTern.Plot.class, PicoTern.Exec.class},
    description = "Tern, a user-space TCP/IP stack")
public class PicoTern implements Callable<Integer> {
    public Integer call() { return 0; }

    static class Link {
        @Option(names = "--link", defaultValue = "memory", description = "memory|afpacket:IFACE|rawqp:DEVICE[:PORT] (default: ${DEFAULT-VALUE})") String link;
        @Option(names = "--ip", defaultValue = "198.18.0.2/24", description = "address (default: ${DEFAULT-VALUE})") String ip;
        @Option(names = "--gw", description = "gateway") String gw;
        @Option(names = "--mac", description = "MAC") String mac;
        @Option(names = "--mtu", description = "MTU") Integer mtu;
        @Option(names = "--pcap", description = "capture file") String pcap;
    }
    @Command(name = "demo", mixinStandardHelpOptions = true, description = "two stacks over the memory wire")
    static class Demo implements Callable<Integer> {
        @Option(names = "--seed", defaultValue = "1") long seed;
        @Option(names = "--loss", defaultValue = "0.02") double loss;
        @Option(names = "--pcap") String pcap;
        @Option(names = "--tcp-mib", defaultValue = "64") int mib;
        public Integer call() { return 0; }
    }
    @Command(name = "ping", mixinStandardHelpOptions = true, description = "ICMP echo")
    static class Ping implements Callable<Integer> {
        @Option(names = "-c") Integer count;
        @Option(names = "-s", defaultValue = "56") int size;
        @Option(names = "-i", defaultValue = "1") double interval;
        @Option(names = "-W", defaultValue = "10") double linger;
        @CommandLine.Mixin LinkMixin link;
        @Parameters(paramLabel = "HOST") String host;
        public Integer call() { return 0; }
    }
    static class LinkMixin extends Link { }
    @Command(name = "nc", mixinStandardHelpOptions = true, description = "netcat over Tern")
    static class Nc implements Callable<Integer> {
        @Option(names = "-u") boolean udp;
        @Option(names = "-l") boolean listen;
        @Option(names = "--join") String join;
        @Option(names = "-w") Double wait;
        @Option(names = "--cc") String cc;
        @Option(names = "--tcp-trace") String trace;
        @CommandLine.Mixin LinkMixin link;
        @Parameters(arity = "1..2") List<String> operands;
        public Integer call() { return 0; }
    }
    @Command(name = "serve", mixinStandardHelpOptions = true, description = "services")
    static class Serve implements Callable<Integer> {
        @Option(names = "--echo") Integer echo;
        @Option(names = "--discard") Integer discard;
        @Option(names = "--udp-echo") Integer udpEcho;
        @Option(names = "--http", arity = "2") List<String> http;
        @Option(names = "--cc") String cc;
        @Option(names = "--tcp-trace") String trace;
        @Option(names = "--shards") Integer shards;
        @CommandLine.Mixin LinkMixin link;
        public Integer call() { return 0; }
    }
    @Command(name = "stat", mixinStandardHelpOptions = true, description = "counters")
    static class Stat implements Callable<Integer> {
        @Option(names = "--all") boolean all;
        @Option(names = "--watch") Double watch;
        @Option(names = "--dir") String dir;
        public Integer call() { return 0; }
    }
    @Command(name = "devices", mixinStandardHelpOptions = true, description = "RDMA devices")
    static class Devices implements Callable<Integer> { public Integer call() { return 0; } }
    @Command(name = "bench", mixinStandardHelpOptions = true, description = "benchmarks")
    static class Bench implements Callable<Integer> {
        @Option(names = "--seconds", defaultValue = "3") int seconds;
        @Option(names = "--json") boolean json;
        @Option(names = "--nio") boolean nio;
        public Integer call() { return 0; }
    }
    @Command(name = "plot", mixinStandardHelpOptions = true, description = "draw a trace")
    static class Plot implements Callable<Integer> {
        @Option(names = "-o", required = true) String out;
        @Option(names = "--title") String title;
        @Parameters(paramLabel = "TRACE.csv") String trace;
        public Integer call() { return 0; }
    }
    @Command(name = "exec", mixinStandardHelpOptions = true, description = "run a JVM program on Tern")
    static class Exec implements Callable<Integer> {
        @Option(names = "--rules") String rules;
        @Option(names = "--name") String name;
        @Option(names = "--idle") String idle;
        @CommandLine.Mixin LinkMixin link;
        @Parameters List<String> command;
        public Integer call() { return 0; }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new PicoTern()).execute(args));
    }
}
