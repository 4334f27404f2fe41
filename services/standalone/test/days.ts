/** The first weekday at least n days ahead, as YYYY-MM-DD: a working day of the day view (Monday to Friday by default). */
export const weekdayIn = (n: number) => {
  const day = new Date(Date.now() + n * 86_400_000);
  while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString().slice(0, 10);
};
