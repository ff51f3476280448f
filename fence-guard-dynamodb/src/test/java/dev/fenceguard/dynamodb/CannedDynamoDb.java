package dev.fenceguard.dynamodb;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * A loopback HTTP/1.1 server that answers DynamoDB's JSON protocol with canned responses, one per request
 * in order, and records each request's {@code X-Amz-Target} and body: the SDK's whole HTTP path (signing,
 * Netty, response parsing, error unmarshalling) runs against it, for the answers dynalite does not give
 * (the item of a failed condition). Not a DynamoDB: it answers what it is told to.
 */
final class CannedDynamoDb implements AutoCloseable {

    /** A recorded request. */
    record Request(String target, String body) {}

    private final ServerSocket server;
    private final BlockingQueue<String[]> answers = new LinkedBlockingQueue<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    /** DynamoDB's error type of a failed condition, in its JSON protocol's form. */
    static final String CONDITION_FAILED = "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException";

    private DynamoDbAsyncClient client;

    CannedDynamoDb() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("canned-dynamodb").start(this::accept);
    }

    /** A new fake, for a test's field (no checked exception). */
    static CannedDynamoDb open() {
        try {
            return new CannedDynamoDb();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The SDK client of this fake, made on first use and closed with it. */
    synchronized DynamoDbAsyncClient client() {
        if (client == null) {
            client = Dynamo.client(endpoint(), null);
        }
        return client;
    }

    /** The body of a failed condition's answer that sends the item back ({@code ALL_OLD}), as DynamoDB documents it. */
    static String conditionFailed(String item) {
        return "{\"__type\":\"" + CONDITION_FAILED + "\",\"message\":\"The conditional request failed\",\"Item\":" + item + "}";
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    /** Queues an answer: HTTP {@code status} with the JSON {@code body}. */
    CannedDynamoDb answer(int status, String body) {
        answers.add(new String[] {Integer.toString(status), body});
        return this;
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Thread.ofPlatform().daemon().start(() -> serve(socket));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket socket) {
        try (socket; InputStream in = new BufferedInputStream(socket.getInputStream()); OutputStream out = socket.getOutputStream()) {
            while (true) {
                String head = readHead(in);
                if (head == null) {
                    return;
                }
                String target = null;
                int length = 0;
                for (String line : head.split("\r\n")) {
                    String lower = line.toLowerCase(Locale.ROOT);
                    if (lower.startsWith("x-amz-target:")) {
                        target = line.substring(line.indexOf(':') + 1).trim();
                    } else if (lower.startsWith("content-length:")) {
                        length = Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
                    }
                }
                String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
                requests.add(new Request(target, body));
                String[] answer = answers.poll();
                if (answer == null) {
                    answer = new String[] {"500", "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\"}"};
                }
                byte[] bytes = answer[1].getBytes(StandardCharsets.UTF_8);
                String status = answer[0].equals("200") ? "200 OK" : answer[0] + " Bad Request";
                out.write(("HTTP/1.1 " + status + "\r\nContent-Type: application/x-amz-json-1.0\r\nx-amzn-RequestId: canned\r\n"
                        + "Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.flush();
            }
        } catch (IOException e) {
            // the client closed the connection
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) != -1) {
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1 : 0;
            if (matched == 4) {
                return head.toString(StandardCharsets.US_ASCII);
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (client != null) {
                client.close();
            }
        }
        server.close();
        acceptor.interrupt();
    }
}
