// Starts Bluesky's reference network (@atproto/dev-env's TestNetwork: PLC, PDS, AppView, bsync,
// Ozone) for factnote's bluesky_e2e tests, writes its URLs as JSON (to NET_INFO_FILE), and serves
// one control request on loopback: POST /process, which returns once the AppView has indexed
// everything the PDS wrote (`processAll`). Users, posts and the rest are driven from Python
// through the atproto SDK, as any client would; nothing here seeds data.
//
// Run with the Node 22 of tools/ensure-bluesky-net.sh; the environment names the packages
// (BLUESKY_NET_DIR, the installed cache directory), PostgreSQL (DB_POSTGRES_URL,
// DB_POSTGRES_SCHEMA: letters and underscores only) and Redis (REDIS_HOST=host:port).
// The network stops when stdin closes (the test session ended, or its process died).
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const dir = process.env.BLUESKY_NET_DIR
if (!dir) throw new Error('BLUESKY_NET_DIR is not set (run tools/ensure-bluesky-net.sh)')
// ES modules resolve packages beside the script, not the working directory: import dev-env
// (a direct dependency, so at the top of node_modules) from the cache directory by its path.
const devEnv = path.join(dir, 'node_modules', '@atproto', 'dev-env', 'dist', 'index.js')
const { TestNetwork } = await import(pathToFileURL(devEnv).href)

const schema = process.env.DB_POSTGRES_SCHEMA ?? ''
if (!/^[A-Za-z_]+$/.test(schema)) throw new Error(`schema must be letters/underscores: ${schema}`)

const bskyPort = Number(process.env.BSKY_PORT)
const net = await TestNetwork.create({
  dbPostgresUrl: process.env.DB_POSTGRES_URL,
  dbPostgresSchema: schema,
  // The production limits (createSession: 30 per 5 minutes, 300 a day, per identifier and IP).
  pds: { rateLimitsEnabled: true },
  // Image URLs point at this AppView's own image server (/img/...), not a CDN that is not here.
  bsky: bskyPort ? { port: bskyPort, publicUrl: `http://localhost:${bskyPort}` } : {},
})

const control = http.createServer(async (req, res) => {
  try {
    if (req.method === 'POST' && req.url === '/process') {
      await net.processAll()
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    } else {
      res.writeHead(404).end()
    }
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err?.stack ?? err))
  }
})
await new Promise((resolve) => control.listen(0, '127.0.0.1', resolve))

const info = JSON.stringify({
  pds: net.pds.url,
  appview: net.bsky.url,
  plc: net.plc.url,
  control: `http://127.0.0.1:${control.address().port}`,
})
console.log(info)
// Written whole, then renamed: the test waits for the file and reads it at once.
const infoFile = process.env.NET_INFO_FILE
if (infoFile) {
  fs.writeFileSync(`${infoFile}.tmp`, info)
  fs.renameSync(`${infoFile}.tmp`, infoFile)
}

let closing = false
const shutdown = async () => {
  if (closing) return
  closing = true
  control.close()
  try {
    await net.close()
  } finally {
    process.exit(0)
  }
}
process.stdin.on('end', shutdown)
process.stdin.on('close', shutdown)
process.stdin.resume()
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)
