// tldraw's own sync server for the host-mode e2e: one `TLSocketRoom` (from @tldraw/sync-core)
// per room, browsers connect over WebSocket at `/connect/<room>` (what `useSync` opens).
// `GET /doc/<room>` answers the room's current document records (the test compares them with
// the tabs' canvases). Prints one JSON line `{"url": "ws://127.0.0.1:<port>", "http": ...}`
// once listening; exits when stdin closes.
import { createServer } from 'node:http'
import { TLSocketRoom } from '@tldraw/sync-core'
import { WebSocketServer } from 'ws'

const rooms = new Map()
const roomFor = (id) => {
  let room = rooms.get(id)
  if (!room || room.isClosed()) {
    room = new TLSocketRoom({})
    rooms.set(id, room)
  }
  return room
}
const roomId = (path, prefix) => (path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : null)

const http = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const id = roomId(url.pathname, '/doc/')
  if (req.method !== 'GET' || !id) {
    res.writeHead(404).end()
    return
  }
  const records = rooms.has(id) ? rooms.get(id).getCurrentSnapshot().documents.map((d) => d.state) : []
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(records))
})

const wss = new WebSocketServer({ server: http })
wss.on('connection', (socket, req) => {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const id = roomId(url.pathname, '/connect/')
  const sessionId = url.searchParams.get('sessionId')
  if (!id || !sessionId) {
    socket.close(1008, 'expected /connect/<room>?sessionId=…')
    return
  }
  roomFor(id).handleSocketConnect({ sessionId, socket })
})

http.listen(0, '127.0.0.1', () => {
  const { port } = http.address()
  console.log(JSON.stringify({ url: `ws://127.0.0.1:${port}`, http: `http://127.0.0.1:${port}` }))
})

const stop = () => {
  for (const room of rooms.values()) room.close()
  wss.close()
  http.close()
  setTimeout(() => process.exit(0), 500).unref()
}
process.stdin.on('end', stop)
process.stdin.resume()
process.on('SIGTERM', stop)
