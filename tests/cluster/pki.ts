/**
 * Credentials of the control plane.
 *
 * TLS: kube-apiserver, kube-controller-manager and kube-scheduler each generate
 * a self-signed CA and serving certificate in their --cert-dir (SAN: the bind
 * address 127.0.0.1) when given no certificate; the written .crt file holds
 * the leaf followed by that CA, and is used as the CA bundle by every client.
 * This needs no openssl and no X.509 code here.
 *
 * Service-account tokens: an RSA key pair generated with node:crypto, given to
 * kube-apiserver as signing key (private) and verification key (public).
 *
 * Static tokens (--token-auth-file) for the admin and for the two control-plane
 * components, all in group system:masters. Agents never get these: they get
 * ServiceAccount tokens from the TokenRequest API (see identity.ts).
 */

import { generateKeyPair, randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";

export interface StaticIdentity {
  user: string;
  token: string;
}

export interface ControlPlanePki {
  dir: string;
  tokenAuthFile: string;
  serviceAccountKeyFile: string;
  serviceAccountSigningKeyFile: string;
  admin: StaticIdentity;
  controllerManager: StaticIdentity;
  scheduler: StaticIdentity;
}

const generateKeyPairAsync = promisify(generateKeyPair);

function newToken(): string {
  return randomBytes(24).toString("hex");
}

/** Writes the token file and service-account keys into `dir` (created). */
export async function createControlPlanePki(dir: string): Promise<ControlPlanePki> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const { publicKey, privateKey } = await generateKeyPairAsync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const pki: ControlPlanePki = {
    dir,
    tokenAuthFile: join(dir, "tokens.csv"),
    serviceAccountKeyFile: join(dir, "sa.pub"),
    serviceAccountSigningKeyFile: join(dir, "sa.key"),
    admin: { user: "admin", token: newToken() },
    controllerManager: { user: "system:kube-controller-manager", token: newToken() },
    scheduler: { user: "system:kube-scheduler", token: newToken() },
  };
  await Deno.writeTextFile(pki.serviceAccountKeyFile, publicKey);
  await Deno.writeTextFile(pki.serviceAccountSigningKeyFile, privateKey, { mode: 0o600 });
  const identities = [pki.admin, pki.controllerManager, pki.scheduler];
  // Format: token,user,uid,"group1,group2"
  const lines = identities.map((id) => `${id.token},${id.user},${id.user},"system:masters"`);
  await Deno.writeTextFile(pki.tokenAuthFile, lines.join("\n") + "\n", { mode: 0o600 });
  return pki;
}

/** The PEM bundle a component wrote into its --cert-dir, once it exists. */
export async function readGeneratedCa(certDir: string): Promise<string | undefined> {
  try {
    for await (const entry of Deno.readDir(certDir)) {
      if (!entry.name.endsWith(".crt")) continue;
      const pem = await Deno.readTextFile(join(certDir, entry.name));
      // The file is written in one go, but check it is complete anyway.
      if (pem.trimEnd().endsWith("-----END CERTIFICATE-----")) return pem;
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return undefined;
}

/** A CA of its own and a serving certificate it signed for 127.0.0.1 (PEM), to rotate to. */
export interface RotatedServingCert {
  caPem: string;
  /** The leaf, then the CA: what kube-apiserver's --cert-dir holds. */
  certPem: string;
  keyPem: string;
}

/** Makes a new CA and a serving certificate for 127.0.0.1 signed by it, with openssl, in `dir`. */
export async function createRotatedServingCert(dir: string): Promise<RotatedServingCert> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => join(dir, name);
  const days = ["-days", "2"];
  // deno-fmt-ignore
  await openssl([
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", file("ca.key"),
    "-out", file("ca.crt"), ...days, "-subj", "/CN=rotated-test-ca",
    "-addext", "basicConstraints=critical,CA:TRUE",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  // deno-fmt-ignore
  await openssl([
    "req", "-newkey", "rsa:2048", "-nodes", "-keyout", file("apiserver.key"),
    "-out", file("apiserver.csr"), "-subj", "/CN=kube-apiserver",
  ]);
  await Deno.writeTextFile(
    file("leaf.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n" +
      "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
  );
  // deno-fmt-ignore
  await openssl([
    "x509", "-req", "-in", file("apiserver.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"),
    "-CAcreateserial", "-out", file("leaf.crt"), ...days, "-extfile", file("leaf.ext"),
  ]);
  const caPem = await Deno.readTextFile(file("ca.crt"));
  return {
    caPem,
    certPem: (await Deno.readTextFile(file("leaf.crt"))) + caPem,
    keyPem: await Deno.readTextFile(file("apiserver.key")),
  };
}

async function openssl(args: string[]): Promise<void> {
  const output = await new Deno.Command("openssl", { args, stdout: "piped", stderr: "piped" })
    .output();
  if (!output.success) {
    throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(output.stderr)}`);
  }
}
