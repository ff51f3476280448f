/**
 * fence-guard on Amazon DynamoDB (AWS SDK for Java v2, the asynchronous client): the lock backend and
 * fenced item writes. The SDK's jars name their modules in their manifests (docs/modules.md).
 *
 * @since 0.1
 */
module dev.fenceguard.dynamodb {
    requires transitive dev.fenceguard.core;
    requires transitive software.amazon.awssdk.services.dynamodb;
    requires transitive software.amazon.awssdk.core;
    requires software.amazon.awssdk.awscore;

    exports dev.fenceguard.dynamodb;
}
