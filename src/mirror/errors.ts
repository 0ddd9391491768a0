/** Every error code src/mirror raises: one place to read them all, and the names tests use. Each says what went wrong and where it is raised. */
export const MirrorError = {
  /** --release-keyring names a file that cannot be read or holds no OpenPGP public key (signatures/keys.ts) */
  SIGNATURE_KEYRING_INVALID: 'SIGNATURE_KEYRING_INVALID',
  /** the release keys installed on the system (/etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release) exist but cannot be read or hold no key (signatures/keys.ts) */
  SIGNATURE_SYSTEM_KEYRING_UNREADABLE: 'SIGNATURE_SYSTEM_KEYRING_UNREADABLE',
  /** The release signature store cannot be reached or answers with an error (signatures/store.ts) */
  SIGNATURE_STORE_UNREACHABLE: 'SIGNATURE_STORE_UNREACHABLE',
  /** --signature-url is not an http(s) URL (signatures/store.ts) */
  SIGNATURE_URL_INVALID: 'SIGNATURE_URL_INVALID',
  /** a release signature ConfigMap file is not YAML/JSON, or not in the shape the cluster version operator reads (signatures/configmap.ts) */
  SIGNATURE_CONFIGMAP_INVALID: 'SIGNATURE_CONFIGMAP_INVALID',
  /** --secure-policy: containers-policy.json refuses the image; it is not mirrored (signatures/plan.ts) */
  SIGNATURE_POLICY_REJECTED: 'SIGNATURE_POLICY_REJECTED',
  /** containers-policy.json is not valid JSON, or a scope, requirement or field in it is invalid (signatures/policy.ts) */
  SIGNATURE_POLICY_INVALID: 'SIGNATURE_POLICY_INVALID',
  /** the containers-policy.json file, or a key file it names (keyPath), cannot be read (signatures/policy.ts) */
  SIGNATURE_POLICY_UNREADABLE: 'SIGNATURE_POLICY_UNREADABLE',
  /** containers-policy.json asks for what cannot be checked offline: Fulcio, Rekor or PKI verification (signatures/policy.ts) */
  SIGNATURE_POLICY_UNSUPPORTED: 'SIGNATURE_POLICY_UNSUPPORTED',
  /** a registries.d file is not valid YAML, or defines a namespace twice or a field badly (signatures/registries-d.ts) */
  REGISTRIES_D_INVALID: 'REGISTRIES_D_INVALID',
  /** the registries.d directory or one of its files cannot be read (signatures/registries-d.ts) */
  REGISTRIES_D_UNREADABLE: 'REGISTRIES_D_UNREADABLE',
  /** a `sha256-<hex>.sig` manifest or layer is not in cosign's simple-signing format (signatures/cosign.ts) */
  SIGSTORE_SIGNATURE_INVALID: 'SIGSTORE_SIGNATURE_INVALID',
  /** a Sigstore public key (ClusterImagePolicy keyData, a PEM file) cannot be read or is of an unsupported type (signatures/cosign.ts) */
  SIGSTORE_KEY_INVALID: 'SIGSTORE_KEY_INVALID',
  /** An image failed for a reason that is not an AirgapError (copy/engine.ts) */
  MIRROR_FAILED: 'MIRROR_FAILED',
  /** the archive in … is damaged:\n … (mirror/archive/archive.ts) */
  ARCHIVE_CORRUPT: 'ARCHIVE_CORRUPT',
  /** … is not a valid archive manifest: … (mirror/archive/archive.ts) */
  ARCHIVE_INVALID: 'ARCHIVE_INVALID',
  /** … holds no airgap archive (… not found) (mirror/archive/archive.ts) */
  ARCHIVE_MISSING: 'ARCHIVE_MISSING',
  /** the archive in … carries no plan (mirror/inputs.ts) */
  ARCHIVE_NO_PLAN: 'ARCHIVE_NO_PLAN',
  /** the archive in … was made from a different ImageSetConfiguration than … (mirror/inputs.ts) */
  ARCHIVE_PLAN_MISMATCH: 'ARCHIVE_PLAN_MISMATCH',
  /** the archive directory … holds a symbolic link or special file (mirror/run.ts) */
  ARCHIVE_UNSAFE_ENTRY: 'ARCHIVE_UNSAFE_ENTRY',
  /** the "auth" value of … is not valid base64 (mirror/auth/credentials.ts) */
  AUTH_ENTRY_INVALID: 'AUTH_ENTRY_INVALID',
  /** the auth file … is not valid JSON… (mirror/auth/credentials.ts) */
  AUTH_FILE_INVALID: 'AUTH_FILE_INVALID',
  /** cannot read the auth file …: … (mirror/auth/credentials.ts) */
  AUTH_FILE_UNREADABLE: 'AUTH_FILE_UNREADABLE',
  /** credential helper … failed for … (mirror/auth/credentials.ts) */
  AUTH_HELPER_FAILED: 'AUTH_HELPER_FAILED',
  /** … has no… (mirror/openshift/catalog-image.ts) */
  CATALOG_ARCH_MISSING: 'CATALOG_ARCH_MISSING',
  /** --channel …: package … of … has no such channel (mirror/list/operators.ts) */
  CATALOG_CHANNEL_UNKNOWN: 'CATALOG_CHANNEL_UNKNOWN',
  /** the filtered catalog for … has no content (mirror/openshift/catalog-rebuild.ts) */
  CATALOG_EMPTY: 'CATALOG_EMPTY',
  /** … … is not a semantic version (mirror/openshift/catalog-filter.ts) */
  CATALOG_FILTER: 'CATALOG_FILTER',
  /** (mirror/openshift/catalog-config.ts) */
  CATALOG_IMAGE_INVALID: 'CATALOG_IMAGE_INVALID',
  /** the source catalog's channel is invalid: … (mirror/openshift/catalog-filter.ts) */
  CATALOG_INVALID: 'CATALOG_INVALID',
  /** … holds … images; a catalog layout must hold one (mirror/openshift/catalog-plan.ts) */
  CATALOG_LAYOUT: 'CATALOG_LAYOUT',
  /** … has no file-based catalog under …… (mirror/openshift/catalog-image.ts) */
  CATALOG_NO_FBC: 'CATALOG_NO_FBC',
  /** --package …: the catalog … has no such package (mirror/list/operators.ts) */
  CATALOG_PACKAGE_UNKNOWN: 'CATALOG_PACKAGE_UNKNOWN',
  /** (mirror/openshift/fbc.ts) */
  CATALOG_PARSE: 'CATALOG_PARSE',
  /** … names …; related images on disk are not supported (mirror/openshift/catalog-plan.ts) */
  CATALOG_RELATED_OCI: 'CATALOG_RELATED_OCI',
  /** targetCatalogSourceTemplate … (mirror/outputs/catalogs.ts) */
  CATALOG_TEMPLATE_INVALID: 'CATALOG_TEMPLATE_INVALID',
  /** cannot read targetCatalogSourceTemplate …: … (mirror/cluster-resources.ts) */
  CATALOG_TEMPLATE_UNREADABLE: 'CATALOG_TEMPLATE_UNREADABLE',
  /** cannot fetch the catalog …: … (mirror/openshift/catalog-plan.ts) */
  CATALOG_UNREACHABLE: 'CATALOG_UNREACHABLE',
  /** … names … as its FBC root (mirror/openshift/catalog-config.ts) */
  CATALOG_UNSUPPORTED: 'CATALOG_UNSUPPORTED',
  /** two catalogs would both be written to … (mirror/outputs/index.ts) */
  CLUSTER_RESOURCE_CONFLICT: 'CLUSTER_RESOURCE_CONFLICT',
  /** a graph image was mirrored but no release payload, so the UpdateService has no releases repository (mirror/outputs/update-service.ts) */
  CLUSTER_RESOURCE_INPUT: 'CLUSTER_RESOURCE_INPUT',
  /** cannot name the … of …: "…" is not a valid Kubernetes name (mirror/outputs/catalogs.ts) */
  CLUSTER_RESOURCE_NAME: 'CLUSTER_RESOURCE_NAME',
  /** unknown release architecture "… (mirror/openshift/graph.ts) */
  GRAPH_ARCH_UNKNOWN: 'GRAPH_ARCH_UNKNOWN',
  /** cannot fetch the graph image base …: … (mirror/resolve.ts) */
  GRAPH_BASE_UNREACHABLE: 'GRAPH_BASE_UNREACHABLE',
  /** channel "…" has no releases for … (mirror/openshift/graph.ts) */
  GRAPH_CHANNEL_EMPTY: 'GRAPH_CHANNEL_EMPTY',
  /** a release channel is required to ask the update graph (mirror/openshift/graph.ts) */
  GRAPH_CHANNEL_MISSING: 'GRAPH_CHANNEL_MISSING',
  /** --channel …: the update graph has no release on this channel for … (mirror/openshift/graph-channels.ts) */
  GRAPH_CHANNEL_UNKNOWN: 'GRAPH_CHANNEL_UNKNOWN',
  /** the graph data at … is not a tar.gz: … (mirror/openshift/graph-data.ts) */
  GRAPH_DATA_INVALID: 'GRAPH_DATA_INVALID',
  /** cannot read the graph data …: … (mirror/openshift/graph-layer.ts) */
  GRAPH_DATA_MISSING: 'GRAPH_DATA_MISSING',
  /** … answered HTTP …: … (mirror/openshift/graph-data.ts) */
  GRAPH_DATA_UNREACHABLE: 'GRAPH_DATA_UNREACHABLE',
  /** (mirror/openshift/graph-image.ts) */
  GRAPH_IMAGE_BASE: 'GRAPH_IMAGE_BASE',
  /** the graph image … has invalid graph data: …: … (mirror/openshift/graph-edges.ts, graph-mirrored.ts) */
  GRAPH_IMAGE_INVALID: 'GRAPH_IMAGE_INVALID',
  /** the update graph is not valid: … (mirror/openshift/graph.ts) */
  GRAPH_INVALID: 'GRAPH_INVALID',
  /** the update graph URL is not a URL: … (mirror/openshift/graph-data.ts) */
  GRAPH_URL_INVALID: 'GRAPH_URL_INVALID',
  /** --max-nested-paths … flattens both … and … into … (mirror/run.ts) */
  NESTED_PATHS_COLLISION: 'NESTED_PATHS_COLLISION',
  /** … is not valid TOML / a [[registry]] field is wrong (mirror/registry/registries-conf.ts) */
  REGISTRIES_CONF_INVALID: 'REGISTRIES_CONF_INVALID',
  /** … is blocked by … (mirror/registry/redirect.ts) */
  REGISTRY_BLOCKED: 'REGISTRY_BLOCKED',
  /** channel "…" has no update path from … to … (mirror/openshift/releases.ts) */
  RELEASE_NO_PATH: 'RELEASE_NO_PATH',
  /** helm repository "…": its index.yaml is not YAML / has no entries (mirror/helm/repository.ts) */
  HELM_INDEX_INVALID: 'HELM_INDEX_INVALID',
  /** helm repository "…" has no chart "…" / no version … (mirror/helm/repository.ts) */
  HELM_CHART_NOT_FOUND: 'HELM_CHART_NOT_FOUND',
  /** chart … of helm repository "…": the archive hashes to …, its index says … (mirror/helm/repository.ts) */
  HELM_CHART_DIGEST: 'HELM_CHART_DIGEST',
  /** a chart is not a chart: no Chart.yaml, a file that is not YAML, a missing name or version, a library chart rendered (mirror/helm/chart.ts) */
  HELM_CHART_INVALID: 'HELM_CHART_INVALID',
  /** a chart archive holds a link, an absolute path or `..`, or a chart is over 100 MiB (mirror/helm/archive.ts, chart.ts; an archive that inflates past its limits is MIRROR_INFLATE_LIMIT) */
  HELM_CHART_UNSAFE: 'HELM_CHART_UNSAFE',
  /** cannot read the chart at …: … (mirror/helm/chart.ts) */
  HELM_CHART_UNREADABLE: 'HELM_CHART_UNREADABLE',
  /** template: <file>:<line>:<col>: … — a chart template does not parse (mirror/helm/template/parser.ts) */
  HELM_TEMPLATE_PARSE: 'HELM_TEMPLATE_PARSE',
  /** a chart template fails while rendering, `required` and `fail` included (mirror/helm/template/exec.ts) */
  HELM_TEMPLATE_EXEC: 'HELM_TEMPLATE_EXEC',
  /** <file>:<line>: the template engine stopped: … — a chart's templates need more steps, output, nesting or a bigger list or string than a render allows (mirror/helm/template/budget.ts) */
  HELM_TEMPLATE_BUDGET: 'HELM_TEMPLATE_BUDGET',
  /** YAML parse error on <template>: a rendered manifest is not YAML (mirror/helm/images.ts) */
  HELM_MANIFEST_INVALID: 'HELM_MANIFEST_INVALID',
  /** an imagePaths entry is not a JSONPath like {.spec.template.spec.containers[*].image} (mirror/helm/images.ts) */
  HELM_IMAGE_PATH_INVALID: 'HELM_IMAGE_PATH_INVALID',
  /** cannot read … / … is not a DeleteImageList (mirror/delete.ts) */
  DELETE_LIST_INVALID: 'DELETE_LIST_INVALID',
  /** refusing to delete what hosted clusters run: … (mirror/delete.ts) */
  DELETE_IN_USE: 'DELETE_IN_USE',
  /** … refuses to delete manifests (mirror/delete.ts) */
  DELETE_REFUSED: 'DELETE_REFUSED',
  /** blob … is missing from the layout at … (mirror/layout/store.ts) */
  LAYOUT_BLOB_MISSING: 'LAYOUT_BLOB_MISSING',
  /** … is not valid JSON (mirror/layout/store.ts) */
  LAYOUT_INDEX_INVALID: 'LAYOUT_INDEX_INVALID',
  /** … is not an OCI image layout (no oci-layout file) (mirror/layout/store.ts) */
  LAYOUT_MISSING: 'LAYOUT_MISSING',
  /** … is not in the layout (mirror/copy/endpoints.ts) */
  LAYOUT_REF_MISSING: 'LAYOUT_REF_MISSING',
  /** unsupported destination … (mirror/location.ts) */
  LOCATION_INVALID: 'LOCATION_INVALID',
  /** …: … is not a digest (mirror/digest.ts): a malformed digest from a registry, archive, plan or journal */
  MIRROR_DIGEST_INVALID: 'MIRROR_DIGEST_INVALID',
  /** … resolved to …, expected … (mirror/copy/engine.ts) */
  MIRROR_DIGEST_MISMATCH: 'MIRROR_DIGEST_MISMATCH',
  /** digest algorithm of … is not supported (mirror/digest.ts) */
  MIRROR_DIGEST_UNSUPPORTED: 'MIRROR_DIGEST_UNSUPPORTED',
  /** … inflates past … (the limit for …) / inflates more than …× its … (mirror/inflate.ts): a decompression bomb, or not what it claims */
  MIRROR_INFLATE_LIMIT: 'MIRROR_INFLATE_LIMIT',
  /** …: … (mirror/manifest.ts) */
  MIRROR_MANIFEST_INVALID: 'MIRROR_MANIFEST_INVALID',
  /** … is … bytes, over the 8 MiB limit (mirror/registry/client.ts) */
  MIRROR_MANIFEST_TOO_LARGE: 'MIRROR_MANIFEST_TOO_LARGE',
  /** … has no manifest for … (mirror/copy/engine.ts) */
  MIRROR_NO_PLATFORM: 'MIRROR_NO_PLATFORM',
  /** …: reading stopped at byte … of … after … attempts: … (mirror/copy/reader.ts) */
  MIRROR_READ_FAILED: 'MIRROR_READ_FAILED',
  /** …: the source stopped sending at byte … of …: … (mirror/copy/reader.ts) */
  MIRROR_SOURCE_STALLED: 'MIRROR_SOURCE_STALLED',
  /** …: the source sent … in …, below the minimum … (mirror/copy/reader.ts) */
  MIRROR_SOURCE_TOO_SLOW: 'MIRROR_SOURCE_TOO_SLOW',
  /** … is a Docker schema 1 manifest (mirror/manifest.ts) */
  MIRROR_SCHEMA1: 'MIRROR_SCHEMA1',
  /** …: got … bytes, the descriptor says … (mirror/digest.ts) */
  MIRROR_SIZE_MISMATCH: 'MIRROR_SIZE_MISMATCH',
  /** … refused the multi-arch index because --arch left some of its architectures out (mirror/copy/engine.ts) */
  MIRROR_SPARSE_INDEX_REFUSED: 'MIRROR_SPARSE_INDEX_REFUSED',
  /** …: the upload session was lost (mirror/copy/blob-upload.ts) */
  MIRROR_UPLOAD_RESTART: 'MIRROR_UPLOAD_RESTART',
  /** … has no linux/… image (it has …) (mirror/openshift/payload.ts) */
  PAYLOAD_ARCH_MISSING: 'PAYLOAD_ARCH_MISSING',
  /** (mirror/openshift/payload.ts) */
  PAYLOAD_INVALID: 'PAYLOAD_INVALID',
  /** … has media type … (mirror/openshift/payload.ts) */
  PAYLOAD_UNSUPPORTED: 'PAYLOAD_UNSUPPORTED',
  /** … is not JSON: … (mirror/plan.ts) */
  PLAN_INVALID: 'PLAN_INVALID',
  /** invalid image reference "…": … (mirror/reference.ts) */
  REF_INVALID: 'REF_INVALID',
  /** delete-images.yaml: items[3].imageReference "…" is outside the destination prefix … (reference.ts) */
  REF_OUTSIDE_SCOPE: 'REF_OUTSIDE_SCOPE',
  /** token service of … answered … … (mirror/registry/auth.ts) */
  REGISTRY_AUTH_FAILED: 'REGISTRY_AUTH_FAILED',
  /** … sent a Bearer challenge without a realm (mirror/registry/auth.ts) */
  REGISTRY_AUTH_INVALID: 'REGISTRY_AUTH_INVALID',
  /** … sends clients to its token service at http://…, over plain http …: the credentials … were not sent (mirror/registry/auth.ts) */
  REGISTRY_AUTH_INSECURE: 'REGISTRY_AUTH_INSECURE',
  /** … denied …: the token service did not grant …; used … (mirror/registry/auth.ts) */
  REGISTRY_DENIED: 'REGISTRY_DENIED',
  /** … answered a range request for … without Content-Range (mirror/registry/client.ts) */
  REGISTRY_ERROR: 'REGISTRY_ERROR',
  /** the tag list of … goes on past 10000 pages; the listing was stopped (mirror/registry/listing.ts) */
  REGISTRY_LISTING_INVALID: 'REGISTRY_LISTING_INVALID',
  /** network error talking to …: … (mirror/registry/errors.ts) */
  REGISTRY_NETWORK: 'REGISTRY_NETWORK',
  /** gave up on …: it stopped answering (… stalls in a row…) (mirror/registry/stalls.ts) */
  REGISTRY_NOT_ANSWERING: 'REGISTRY_NOT_ANSWERING',
  /** …: … stalled: no response for … (mirror/registry/stalls.ts) */
  REGISTRY_STALLED: 'REGISTRY_STALLED',
  /** … does not exist (…) (mirror/registry/errors.ts) */
  REGISTRY_NOT_FOUND: 'REGISTRY_NOT_FOUND',
  /** … kept rate-limiting … (mirror/registry/errors.ts) */
  REGISTRY_RATE_LIMITED: 'REGISTRY_RATE_LIMITED',
  /** TLS verification of … failed: … (mirror/registry/errors.ts) */
  REGISTRY_TLS: 'REGISTRY_TLS',
  /** … refused access: …; used … (mirror/registry/auth.ts) */
  REGISTRY_UNAUTHORIZED: 'REGISTRY_UNAUTHORIZED',
  /** cannot reach …: … (mirror/registry/errors.ts) */
  REGISTRY_UNREACHABLE: 'REGISTRY_UNREACHABLE',
  /** cannot read a minor version from "… (mirror/openshift/releases.ts) */
  RELEASE_CHANNEL_NAME: 'RELEASE_CHANNEL_NAME',
  /** the update graph of channel "…" was not fetched (mirror/openshift/releases.ts) */
  RELEASE_GRAPH_MISSING: 'RELEASE_GRAPH_MISSING',
  /** … … is not in channel "… (mirror/openshift/releases.ts) */
  RELEASE_NOT_IN_CHANNEL: 'RELEASE_NOT_IN_CHANNEL',
  /** release … has no KubeVirt container disk in its coreos-bootimages stream (mirror/openshift/release-plan.ts) */
  RELEASE_NO_KUBEVIRT: 'RELEASE_NO_KUBEVIRT',
  /** channel "…" has no release in … … … (mirror/openshift/releases.ts) */
  RELEASE_RANGE_EMPTY: 'RELEASE_RANGE_EMPTY',
  /** channel "…": … "…" is not a version (mirror/openshift/releases.ts) */
  RELEASE_VERSION_INVALID: 'RELEASE_VERSION_INVALID',
  /** the update graph has no OpenShift … release for … (mirror/list/releases.ts) */
  RELEASE_VERSION_UNKNOWN: 'RELEASE_VERSION_UNKNOWN',
  /** …: …: … is not … (an inventory file that is not what airgap writes) (mirror/inventory/format.ts) */
  INVENTORY_INVALID: 'INVENTORY_INVALID',
  /** the inventory of … could not read …: it lists only part of what is there (mirror/inventory/walk.ts) */
  INVENTORY_INCOMPLETE: 'INVENTORY_INCOMPLETE',
  /** … needs blobs neither the archive nor the destination holds: … (mirror/archive/preflight.ts) */
  MIRROR_BLOB_UNAVAILABLE: 'MIRROR_BLOB_UNAVAILABLE',
  /** the workspace … holds the state of mirroring to …, not … (mirror/run.ts) */
  WORKSPACE_OTHER_DESTINATION: 'WORKSPACE_OTHER_DESTINATION',
} as const;
export type MirrorError = (typeof MirrorError)[keyof typeof MirrorError];
