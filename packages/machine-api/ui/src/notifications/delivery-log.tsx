/** The delivery log: every notification sent or tried, newest first, filtered by its status. */

import { when } from '../format';
import type { Delivery, DeliveryFilter } from './use-notifications';

function StatusFilter({
  status,
  setStatus,
}: {
  status: DeliveryFilter;
  setStatus: (status: DeliveryFilter) => void;
}) {
  return (
    <label>
      Status
      <select
        name="status"
        value={status}
        onChange={(event) => setStatus((event.currentTarget as HTMLSelectElement).value as DeliveryFilter)}
      >
        <option value="">all</option>
        <option value="pending">pending</option>
        <option value="delivered">delivered</option>
        <option value="failed">failed</option>
        <option value="folded">folded into a digest</option>
      </select>
    </label>
  );
}

export function DeliveryLog({
  deliveries,
  status,
  setStatus,
}: {
  deliveries: Delivery[];
  status: DeliveryFilter;
  setStatus: (status: DeliveryFilter) => void;
}) {
  return (
    <>
      <h2>Delivery log</h2>
      <StatusFilter status={status} setStatus={setStatus} />
      {deliveries.length === 0 ? (
        <p>Nothing sent yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Target</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Answer</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id} data-delivery={delivery.id}>
                  <td>{when(delivery.created_at)}</td>
                  <td>{delivery.target_name}</td>
                  <td>{delivery.event}</td>
                  <td>{delivery.status}</td>
                  <td>{delivery.attempts}</td>
                  <td>
                    {delivery.response_status ?? ''} {delivery.error ?? ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
