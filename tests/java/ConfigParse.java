// How Kafka's Java reads a config value and writes the token request (conftest.java_parse): one value per
// input line, as the hex of its UTF-8 bytes; one answer per output line.
// `int` / `long`: ConfigDef.parseType's INT / LONG (trim, then Integer.parseInt / Long.parseLong), or NFE.
// `double`: ConfigDef.parseType's DOUBLE (trim, then Double.parseDouble): Double.doubleToLongBits, or NFE.
// `boolean`: ConfigDef.parseType's BOOLEAN (trim, then equalsIgnoreCase "true" / "false"), or invalid.
// `urlencode`: java.net.URLEncoder.encode(value, UTF_8), as the OAuth client-credentials request uses it.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

public class ConfigParse {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String value = new String(HexFormat.of().parseHex(line), StandardCharsets.UTF_8);
            out.append(answer(args[0], value)).append('\n');
        }
        System.out.print(out);
    }

    static String answer(String mode, String value) {
        String trimmed = value.trim();
        try {
            switch (mode) {
                case "int": return String.valueOf(Integer.parseInt(trimmed));
                case "long": return String.valueOf(Long.parseLong(trimmed));
                case "double": return String.valueOf(Double.doubleToLongBits(Double.parseDouble(trimmed)));
                case "boolean":
                    if (trimmed.equalsIgnoreCase("true")) return "true";
                    return trimmed.equalsIgnoreCase("false") ? "false" : "invalid";
                case "urlencode": return URLEncoder.encode(value, StandardCharsets.UTF_8);
                default: throw new IllegalArgumentException(mode);
            }
        } catch (NumberFormatException e) {
            return "NFE";
        }
    }
}
