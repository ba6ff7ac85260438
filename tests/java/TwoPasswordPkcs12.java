import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;

/**
 * A PKCS12 key store whose key entry has its own password, as Java's KeyStore API writes one (keytool refuses
 * to: "Different store and key passwords not supported for PKCS12 KeyStores"): the MAC and the certificates
 * under the store password, the key under the key password.
 * Arguments: KEY.der (PKCS#8, unencrypted) CHAIN.pem OUT.p12; the passwords on stdin, one per line (store, key).
 */
public class TwoPasswordPkcs12 {
    public static void main(String[] args) throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        char[] storePassword = in.readLine().toCharArray();
        char[] keyPassword = in.readLine().toCharArray();
        PrivateKey key = KeyFactory.getInstance("RSA")
            .generatePrivate(new PKCS8EncodedKeySpec(Files.readAllBytes(Path.of(args[0]))));
        Certificate[] chain;
        try (FileInputStream pem = new FileInputStream(args[1])) {
            chain = CertificateFactory.getInstance("X.509").generateCertificates(pem).toArray(new Certificate[0]);
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("client", key, keyPassword, chain);
        try (FileOutputStream out = new FileOutputStream(args[2])) {
            store.store(out, storePassword);
        }
    }
}
