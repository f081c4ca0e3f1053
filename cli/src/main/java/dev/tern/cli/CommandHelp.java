package dev.tern.cli;

import java.util.List;

/**
 * What {@code tern COMMAND --help} (and {@code tern help COMMAND}) prints: the usage line, a sentence on what the
 * command does, every option with its default, and examples, wrapped to {@link #WIDTH} columns.
 *
 * @param name     the command's name ({@code nc})
 * @param synopsis its operands and flags after the name, as in DESIGN.md's contract
 * @param summary  one line for {@code tern help}'s list of commands
 * @param text     what the command does, in sentences
 * @param options  every option the command takes, in the order a user needs them
 * @param linkFlags whether the command also takes the link flags ({@link NetworkOptions#HELP})
 * @param examples command lines a user can paste
 */
record CommandHelp(String name, String synopsis, String summary, String text, List<Option> options,
                   boolean linkFlags, List<String> examples) {
    /** Help text fits a terminal of this many columns. */
    static final int WIDTH = 100;
    private static final int FLAG_COLUMN = 2;
    private static final int TEXT_COLUMN = 26;

    /**
     * One option: its spelling with its value ({@code -w SECONDS}), what it does, and its default in words
     * ({@code null} for an option without one, such as a switch that is off unless given).
     */
    record Option(String flag, String description, String defaultValue) {
    }

    static Option option(String flag, String description, String defaultValue) {
        return new Option(flag, description, defaultValue);
    }

    /** The text {@code tern COMMAND --help} prints. */
    String render() {
        final StringBuilder out = new StringBuilder();
        wrap(out, "usage: ./tern " + name + (synopsis.isEmpty() ? "" : " " + synopsis), 0, "              ");
        out.append('\n');
        wrap(out, text, 0, "");
        if (!options.isEmpty()) {
            out.append("\noptions:\n");
            renderOptions(out, options);
        }
        if (linkFlags) {
            out.append("\nlink flags:\n");
            renderOptions(out, NetworkOptions.HELP);
        }
        out.append(examples.size() == 1 ? "\nexample:\n" : "\nexamples:\n");
        for (String example : examples) {
            wrap(out, example, FLAG_COLUMN, "      ");
        }
        return out.toString();
    }

    private static void renderOptions(StringBuilder out, List<Option> options) {
        for (Option option : options) {
            final String text = option.description + (option.defaultValue == null ? "" : " (default: "
                + option.defaultValue + ")");
            final String flag = " ".repeat(FLAG_COLUMN) + option.flag;
            if (flag.length() + 2 > TEXT_COLUMN) {
                out.append(flag).append('\n');
                wrap(out, text, TEXT_COLUMN, "");
            } else {
                final StringBuilder line = new StringBuilder(flag);
                line.append(" ".repeat(TEXT_COLUMN - flag.length()));
                wrapAfter(out, line, text, TEXT_COLUMN);
            }
        }
    }

    /** Appends {@code text} wrapped at word boundaries, every line indented by {@code indent}, continuations more. */
    private static void wrap(StringBuilder out, String text, int indent, String continuation) {
        wrapAfter(out, new StringBuilder(" ".repeat(indent)), text, indent + continuation.length());
    }

    private static void wrapAfter(StringBuilder out, StringBuilder line, String text, int continuationIndent) {
        boolean empty = true; // no word of text on this line yet
        for (String word : text.split(" ")) {
            if (!empty && line.length() + 1 + word.length() > WIDTH) {
                out.append(line).append('\n');
                line.setLength(0);
                line.append(" ".repeat(continuationIndent));
                empty = true;
            }
            if (!empty) {
                line.append(' ');
            }
            line.append(word);
            empty = false;
        }
        out.append(line).append('\n');
    }

    /** The list {@code tern help} prints: one line per command, then where to find each one's options. */
    static String overview(List<CommandHelp> commands) {
        final StringBuilder out = new StringBuilder("usage: ./tern COMMAND [OPTIONS]   (./tern COMMAND --help: "
            + "its options, defaults and an example)\n\ncommands:\n");
        for (CommandHelp command : commands) {
            out.append(String.format("  %-9s %s%n", command.name, command.summary));
        }
        out.append("\nNetwork commands also take the link flags (./tern ping --help shows them).\n"
            + "Exit status: 0 done, 1 the command could not do its job, 2 a bad command line (ping: as ping(8)).\n");
        return out.toString();
    }
}
